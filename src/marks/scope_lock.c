/*-------------------------------------------------------------------------
 *
 * scope_lock.c
 *	  The heavyweight locks that order the writers of a scope, bounded in
 *	  number per transaction.
 *
 * Each scope has its own lock: writers at the mark take it in share mode,
 * a raise takes it exclusively (see scope_mark.c).  One lock per scope is
 * one entry of the shared lock table per scope per transaction, and a
 * transaction writing 20,000 scopes (a per-tenant table loaded at once)
 * ran out of it under the default max_locks_per_transaction.
 *
 * So a transaction locks at most SCOPE_LOCKS_MAX of its own scopes one by
 * one ("fine"), and every further one of them through the lock of the
 * scope's owner ("coarse"): one lock for all the scopes a role owns.  Its
 * own scopes are those of the session's role (as SET ROLE made it; not the
 * owner of a SECURITY DEFINER function, nor the table owner a foreign key's
 * cascade runs as, both of which may be another tenant) and of every role
 * it is a member of (a group role's scopes, which it may write as the
 * group; from 16, a membership that gives neither the group's privileges
 * nor SET ROLE to it does not count).  Another owner's scopes it always
 * locks one by one: a lock by owner would cover every scope of that
 * owner, also those the transaction has no right to write, and hold up
 * their takeovers (1.4 did so past 128 scope locks: a role granted INSERT
 * on one table of a tenant stalled every takeover of the tenant's
 * scopes).  Those fine locks are bounded by
 * max_locks_per_transaction: a transaction that would hold more scope locks
 * than that is refused with a hint (54000), before it fills the shared lock
 * table that every session shares.
 *
 *   fine, at the mark   the scope's lock, in ShareLock: nothing else, so the
 *                       common write pays for one lock, as in 1.1;
 *   fine, a raise       the owner's lock in RowExclusiveLock, then the
 *                       scope's lock in ExclusiveLock, and the owner's lock
 *                       given back at once;
 *   coarse, at the mark the owner's lock in ShareLock, then the scope's
 *                       own lock in ShareLock, given back at once;
 *   coarse, a raise     the owner's lock in ShareUpdateExclusiveLock, then
 *                       the scope's own lock in ExclusiveLock, both before
 *                       the mark is read (not the scope's own lock for a
 *                       scope the transaction created: no other
 *                       transaction can see it yet); a raise found overtaken
 *                       under them is a write at the mark, and the scope's
 *                       own lock goes down to ShareLock.
 *
 * Why that keeps I3 and I6.  A coarse writer at the mark holds the owner's
 * lock in share mode: every raise of the owner's scopes that comes later,
 * fine (RowExclusive) or coarse (ShareUpdateExclusive), waits for it on
 * that lock.  A fine raise that came first passed the owner's lock before
 * the writer had it, and held it until it held the scope's own lock
 * exclusively: the writer's pass over the scope's own lock waits for it to
 * end, and then reads its mark.  A coarse raise that came first holds the
 * owner's lock to the end: the writer waits for it there, or takes the
 * scope's own lock (below), which the raise takes exclusively.  A raise of a
 * scope, fine or coarse, holds its own lock exclusively, so it waits for,
 * and holds off, the scope's fine writers and every other raise of it.  No
 * writer at the mark waits for another.
 *
 * What no longer waits (1.5): a fine raise keeps no lock of its owner, so a
 * role with write on one scope of an owner, raising it in an open
 * transaction, holds up neither the owner's raises of its other scopes nor
 * the owner's bulk writers at the mark (a fine raise kept the owner's lock
 * in RowExclusiveLock to the end, which every coarse writer at the mark
 * then waited for: past 32 scope locks, the owner's bulk transaction, and
 * every takeover later in it, waited for the stranger).  A coarse write
 * at the mark that finds the owner's lock held or awaited by a coarse raise
 * (a member's) takes the scope's own lock in ShareLock instead, and keeps
 * it, while its fine locks stay under max_locks_per_transaction.  Nor does
 * a coarse at-mark lock come first in a raise (scope_mark.c locks a raise
 * it foresees exclusively at once).
 *
 * Every party names the owner it read before locking, and checks it again
 * under the lock (scope_mark.c): a party that finds another owner there
 * gives back what it took for that owner and locks again by the one it
 * found (a coarse raise, the scope's own lock too, or its overtaken raise
 * would keep the scope exclusively, a fine lock found held already);
 * fencing.alter_scope_owner() first locks the scope exclusively under its
 * old owner, so that no writer still holds it by that owner.  So the number
 * of locks is bounded (by max_locks_per_transaction plus the number of own
 * roles written to) except for a transaction that raises the marks of
 * thousands of its own existing scopes.  The price of a bulk transaction:
 * while it is open, takeovers of its own roles' scopes wait for it (and, if
 * it raises marks, bulk writers of theirs too) -- never a scope of a role
 * it is not a member of; two transactions that raise marks may deadlock
 * (Postgres aborts one, 40P01).
 *
 * On a Citus worker a writer that would wait for the scope's lock while a
 * raise fed by the coordinator is in flight there gives way at once (40P01,
 * scope_mark.c): a takeover reaches every node at the same time, and an
 * old leader's transaction holding the scope on one worker and waiting for
 * it on another would otherwise deadlock with it across nodes, where Citus
 * cancels the younger transaction, the takeover.  The feed's trigger holds
 * a second lock of the scope (field4 0xFE05) exclusively before it waits
 * for the writers: that is how the writer tells a raise from a change of
 * grants, for which it waits as before.
 *
 * Scope locks are advisory-type tags keyed by the scope's id, with a field4
 * that pg_advisory_lock() cannot produce, 0xFE01 (pg_locks shows objsubid
 * -511).  An id is no name's hash: no name a stranger chooses locks another
 * tenant's scope, and callers lock only scopes that exist, once the caller's
 * right to the scope has been checked (scope_mark.c, leases/lease.c).
 *
 *-------------------------------------------------------------------------
 */
#include "marks/scope_lock.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/acl.h"


/* Scope locks a transaction takes one by one before it locks its own by owner. */
#define SCOPE_LOCKS_MAX		32

/*
 * Fine scope locks this transaction (or its open subtransactions) took; a
 * subtransaction's abort takes back those it took (scope_lock_uncount()).
 */
static int	fine_locks = 0;

int64
scope_lock_legacy_id(const char *scope)
{
	return (int64) hash_bytes_extended((const unsigned char *) scope, (int) strlen(scope), 0);
}

void
scope_lock_tag(LOCKTAG *tag, int64 scope_id, uint16 kind)
{
	uint64		id = (uint64) scope_id;

	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (id >> 32), (uint32) id, kind);
}

static void
scope_tag(LOCKTAG *tag, int64 scope_id)
{
	scope_lock_tag(tag, scope_id, FENCING_LOCKTAG_SCOPE);
}

/* The upper level: the scope's owner (InvalidOid before 1.2's owners). */
static void
owner_tag(LOCKTAG *tag, Oid owner)
{
	scope_lock_tag(tag, (int64) owner, FENCING_LOCKTAG_OWNER);
}

LockAcquireResult
scope_lock_acquire(const char *scope, int64 scope_id, Oid owner, LOCKMODE mode,
				   bool first, bool *coarse)
{
	LOCKTAG		upper;
	LOCKTAG		tag;
	LockAcquireResult res;

	Assert(mode == ShareLock || mode == ExclusiveLock);
	if (first)
		*coarse = scope_lock_next_is_coarse(scope, owner);
	owner_tag(&upper, owner);
	if (*coarse && mode == ExclusiveLock)
		return LockAcquire(&upper, ShareUpdateExclusiveLock, false, false);
	if (*coarse)
	{
		/*
		 * A write at the mark by owner: the owner's lock in share mode, unless
		 * a coarse raise of one of the owner's scopes holds or awaits it:
		 * then this scope's own lock, which a raise of this very scope takes
		 * exclusively, and no raise of another scope conflicts with (while
		 * the fine locks stay under max_locks_per_transaction; past them, the
		 * owner's lock is waited for).
		 */
		res = LockAcquire(&upper, ShareLock, false, fine_locks < max_locks_per_xact);
		if (res != LOCKACQUIRE_NOT_AVAIL)
		{
			/*
			 * A fine raise of this scope that took the owner's lock before us
			 * holds the scope's own lock exclusively by now: wait for it to
			 * end.  Every later raise of it waits for our share of the
			 * owner's lock, so the scope's lock is not kept.
			 */
			scope_tag(&tag, scope_id);
			(void) LockAcquire(&tag, ShareLock, false, false);
			LockRelease(&tag, ShareLock, false);
			return res;
		}
		*coarse = false;
	}

	scope_tag(&tag, scope_id);
	if (mode == ShareLock)
		res = LockAcquire(&tag, ShareLock, false, false);
	else
	{
		/*
		 * A raise passes through the owner's lock, where it waits for the
		 * owner's writers at the mark that lock by owner (and may be writing
		 * this scope), and holds it only until it holds the scope's own
		 * lock, where those that come later wait for it: a role with write
		 * on one scope of an owner, raising it in an open transaction, holds
		 * up none of the owner's other scopes.
		 */
		(void) LockAcquire(&upper, RowExclusiveLock, false, false);
		res = LockAcquire(&tag, ExclusiveLock, false, false);
		LockRelease(&upper, RowExclusiveLock, false);
	}
	if (res == LOCKACQUIRE_OK)
		fine_locks++;
	return res;
}

void
scope_lock_release(int64 scope_id, Oid owner, LOCKMODE mode)
{
	LOCKTAG		tag;

	scope_tag(&tag, scope_id);
	LockRelease(&tag, mode, false);
	fine_locks--;
}

void
scope_lock_wait_for_writers(int64 scope_id)
{
	LOCKTAG		tag;

	scope_tag(&tag, scope_id);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

void
scope_lock_writers_go_on(int64 scope_id)
{
	LOCKTAG		tag;

	/* share mode first: the scope is not let go of in between */
	scope_tag(&tag, scope_id);
	(void) LockAcquire(&tag, ShareLock, false, false);
	LockRelease(&tag, ExclusiveLock, false);
}

void
scope_lock_writers_wait_undone(int64 scope_id)
{
	LOCKTAG		tag;

	scope_tag(&tag, scope_id);
	LockRelease(&tag, ExclusiveLock, false);
}

void
scope_lock_fed_raise(int64 scope_id)
{
	LOCKTAG		tag;

	scope_lock_tag(&tag, scope_id, FENCING_LOCKTAG_FED_RAISE);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/* Whether tag cannot be had in mode now; nothing is kept either way. */
static bool
lock_would_wait(const LOCKTAG *tag, LOCKMODE mode)
{
	LockAcquireResult res = LockAcquire(tag, mode, false, true);

	if (res == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(tag, mode, false);
	return false;
}

bool
scope_lock_share_would_wait(int64 scope_id)
{
	LOCKTAG		tag;

	scope_tag(&tag, scope_id);
	return lock_would_wait(&tag, ShareLock);
}

bool
scope_lock_fed_raise_in_flight(int64 scope_id)
{
	LOCKTAG		tag;

	scope_lock_tag(&tag, scope_id, FENCING_LOCKTAG_FED_RAISE);
	return lock_would_wait(&tag, ShareLock);
}

bool
scope_lock_past_fine(void)
{
	return fine_locks >= SCOPE_LOCKS_MAX;
}

bool
scope_lock_next_is_coarse(const char *scope, Oid owner)
{
	Oid			session_role;
	const char *owner_name;

	if (likely(fine_locks < SCOPE_LOCKS_MAX))
		return false;
	session_role = GetOuterUserId();
	/*
	 * Its own: the owner's privileges are its privileges (scope_acl.c), or
	 * it may SET ROLE to the owner.  Not a bare membership (from 16, one
	 * without INHERIT and SET, such as CREATEROLE's ADMIN-only one), which
	 * gives no right to write any of the owner's scopes.
	 */
	if (owner == session_role || has_privs_of_role(session_role, owner) ||
		member_can_set_role(session_role, owner))
		return true;
	if (fine_locks < max_locks_per_xact)
		return false;
	owner_name = GetUserNameFromId(owner, true);
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("too many scopes of other owners locked in one transaction"),
			 errdetail("Scope \"%s\" is owned by role \"%s\", whose privileges role \"%s\" does not have and which it may not SET ROLE to; this transaction holds %d scope locks already, one for each such scope.",
					   scope, owner_name ? owner_name : "?",
					   GetUserNameFromId(session_role, false), fine_locks),
			 errhint("Write other owners' scopes in smaller transactions, or raise max_locks_per_transaction.")));
	return false;				/* not reached */
}

void
scope_lock_forget(void)
{
	fine_locks = 0;
}

void
scope_lock_uncount(int released)
{
	fine_locks -= released;
	Assert(fine_locks >= 0);
}
