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
 * Whether a scope this transaction has not locked yet is to be locked by its
 * table (the transaction holds many scope locks already).  A scope keeps
 * the level it was first locked at until the transaction ends.
 */
extern bool scope_lock_next_is_coarse(void);

/*
 * Lock "scope" in ShareLock (a write at the mark) or ExclusiveLock (a raise),
 * by its own lock, or by the table lock when "coarse".  Returns LockAcquire()'s
 * result for the lock that decides.
 */
extern LockAcquireResult scope_lock_acquire(uint64 hash, LOCKMODE mode,
											bool coarse);

/*
 * A coarse raise of a scope that has a mark: wait for, and hold off until
 * the transaction ends, its writers at the mark (its own lock, exclusively).
 */
extern void scope_lock_wait_for_writers(uint64 hash);

/* Give back a lock scope_lock_acquire() newly took (never a coarse one). */
extern void scope_lock_release(uint64 hash, LOCKMODE mode);

/* A scope's hash, as the functions above take it (callers may keep it). */
extern uint64 scope_lock_hash(const char *scope);

/* The transaction ended: no scope lock is held any more. */
extern void scope_lock_forget(void);

/* A subtransaction's abort released that many fine locks it had taken. */
extern void scope_lock_uncount(int released);

#endif							/* SCOPE_LOCK_H */
