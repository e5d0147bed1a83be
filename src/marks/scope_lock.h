/*-------------------------------------------------------------------------
 *
 * scope_lock.h
 *	  The heavyweight locks that order the writers of a scope, bounded in
 *	  number per transaction.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SCOPE_LOCK_H
#define SCOPE_LOCK_H

#include "fencing.h"

#include "storage/lock.h"

/*
 * Whether a scope of owner this transaction has not locked yet is to be
 * locked by its owner's lock: only a scope of the session role's own, or of
 * a role it is a member of, once the transaction holds 32 scope locks.
 * Another owner's scope is always locked by its own lock; past
 * max_locks_per_transaction of those, an error (54000) names "scope".
 * A scope keeps the level it was first locked at until the transaction ends.
 */
extern bool scope_lock_next_is_coarse(const char *scope, Oid owner);

/*
 * Lock a scope in ShareLock (a write at the mark) or ExclusiveLock (a raise),
 * by its own lock, or by its owner's lock when "*coarse"; "first": the
 * transaction's first lock of the scope, whose level is decided here
 * (scope_lock_next_is_coarse) and returned in *coarse.  A write at the mark
 * that would wait for the owner's lock (a coarse raise of one of its scopes
 * is in flight) takes the scope's own lock instead, and *coarse becomes
 * false.
 * Returns LockAcquire()'s result for the lock that decides.
 */
extern LockAcquireResult scope_lock_acquire(const char *scope, int64 scope_id, Oid owner,
											LOCKMODE mode, bool first, bool *coarse);

/*
 * A coarse raise of a scope: wait for, and hold off until the transaction
 * ends, its writers and raisers that lock it by its own lock (its own lock,
 * exclusively).
 */
extern void scope_lock_wait_for_writers(int64 scope_id);

/*
 * A coarse raise that found its scope raised past it meanwhile, a write at
 * the mark now: the scope's own lock, taken by scope_lock_wait_for_writers(),
 * goes down to share mode, which holds off the scope's raises and not its
 * writers at the mark.
 */
extern void scope_lock_writers_go_on(int64 scope_id);

/*
 * A coarse raise that found, under its locks, that the scope has another
 * owner than the one it locked by: the scope's own lock taken by
 * scope_lock_wait_for_writers() is given back (the raise locks again by the
 * owner it found, and must not keep the scope exclusively meanwhile).
 */
extern void scope_lock_writers_wait_undone(int64 scope_id);

/* Whether this transaction has taken all the fine locks it takes of its own scopes. */
extern bool scope_lock_past_fine(void);

/* Give back a lock scope_lock_acquire() newly took (never a coarse one). */
extern void scope_lock_release(int64 scope_id, Oid owner, LOCKMODE mode);

/*
 * A scope is locked by its id (fencing.scopes.id): a number drawn from a
 * sequence when the scope's row is created, which no name can collide with.
 * Callers lock only a scope that exists, after checking the caller's right
 * to it.  A registry created before ids existed (its SQL not yet updated)
 * has no id: then the scope's name hash stands in (scope_lock_legacy_id).
 */
extern int64 scope_lock_legacy_id(const char *scope);

/* What a scope is locked by: its id, and its owner (the coarse level). */
typedef struct ScopeKey
{
	int64		id;				/* fencing.scopes.id; 0: no such scope */
	Oid			owner;			/* InvalidOid before 1.2's owners */
	bool		legacy;			/* no id yet: the name's hash stands in */
	/*
	 * Read with the key, as exact as the mark, but not what a scope is locked
	 * by (no comparison of keys looks at it): its tokens are 'issued'.
	 */
	bool		issued;
} ScopeKey;

/* The tag of a lock on a scope id, for a kind of lock (field4, below). */
extern void scope_lock_tag(LOCKTAG *tag, int64 scope_id, uint16 kind);

/* field4 of the scope locks, the lease locks (leases/lease.c), the owners' */
#define FENCING_LOCKTAG_SCOPE	0xFE01
#define FENCING_LOCKTAG_LEASE	0xFE03
#define FENCING_LOCKTAG_OWNER	0xFE04
#define FENCING_LOCKTAG_FED_RAISE	0xFE05

/*
 * On a Citus node: a raise of the scope's mark fed by the coordinator is in
 * flight here (held exclusively by the feed's trigger, before it waits for
 * the scope's writers, to the end of its transaction).
 */
extern void scope_lock_fed_raise(int64 scope_id);

/*
 * Whether a writer at the mark would wait for the scope's lock now (share
 * mode, not taken), and whether a fed raise of the scope is in flight.
 */
extern bool scope_lock_share_would_wait(int64 scope_id);
extern bool scope_lock_fed_raise_in_flight(int64 scope_id);

/* The transaction ended: no scope lock is held any more. */
extern void scope_lock_forget(void);

/* A subtransaction's abort released that many fine locks it had taken. */
extern void scope_lock_uncount(int released);

#endif							/* SCOPE_LOCK_H */
