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
 * group).  Another owner's scopes it always locks one by one: a lock by
 * owner would cover every scope of that owner, also those the transaction
 * has no right to write, and hold up their takeovers (1.4 did so past 128
 * scope locks: a role granted INSERT on one table of a tenant stalled every
 * takeover of the tenant's scopes).  Those fine locks are bounded by
 * max_locks_per_transaction: a transaction that would hold more scope locks
 * than that is refused with a hint (54000), before it fills the shared lock
 * table that every session shares.
 *
 *   fine, at the mark   the scope's lock, in ShareLock: nothing else, so the
 *                       common write pays for one lock, as in 1.1;
 *   fine, a raise       the owner's lock in RowExclusiveLock, then the
 *                       scope's lock in ExclusiveLock;
 *   coarse, at the mark the owner's lock in ShareLock;
 *   coarse, a raise     the owner's lock in ExclusiveLock and, for a scope
 *                       that already has a mark, its own lock in
 *                       ExclusiveLock.
 *
 * Why that keeps I3 and I6: a coarse writer at the mark holds off every
 * raise of the owner's scopes (RowExclusive, Exclusive) and no writer at the
 * mark.  A coarse raise holds off every other raise of the owner's scopes
 * and every coarse writer of them; writers at the mark of a scope it raises
 * exist only if the scope has a committed mark, and then it waits for them,
 * and holds them off, on the scope's own lock (no scope can get its first
 * mark meanwhile: that is a raise).  Every party names the owner it read
 * before locking, and checks it again under the lock (scope_mark.c);
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
scope_lock_acquire(int64 scope_id, Oid owner, LOCKMODE mode, bool coarse)
{
	LOCKTAG		upper;
	LOCKTAG		tag;
	LockAcquireResult res;

	Assert(mode == ShareLock || mode == ExclusiveLock);
	owner_tag(&upper, owner);
	if (coarse)
		return LockAcquire(&upper, mode, false, false);

	/* a raise shows itself on the owner's lock, where bulk writers see it */
	if (mode == ExclusiveLock)
		(void) LockAcquire(&upper, RowExclusiveLock, false, false);
	scope_tag(&tag, scope_id);
	res = LockAcquire(&tag, mode, false, false);
	if (res == LOCKACQUIRE_OK)
		fine_locks++;
	return res;
}

void
scope_lock_release(int64 scope_id, Oid owner, LOCKMODE mode)
{
	LOCKTAG		upper;
	LOCKTAG		tag;

	scope_tag(&tag, scope_id);
	LockRelease(&tag, mode, false);
	if (mode == ExclusiveLock)
	{
		owner_tag(&upper, owner);
		LockRelease(&upper, RowExclusiveLock, false);
	}
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
scope_lock_next_is_coarse(const char *scope, Oid owner)
{
	Oid			session_role;
	const char *owner_name;

	if (likely(fine_locks < SCOPE_LOCKS_MAX))
		return false;
	session_role = GetOuterUserId();
	if (owner == session_role || is_member_of_role(session_role, owner))
		return true;
	if (fine_locks < max_locks_per_xact)
		return false;
	owner_name = GetUserNameFromId(owner, true);
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("too many scopes of other owners locked in one transaction"),
			 errdetail("Scope \"%s\" is owned by role \"%s\", which role \"%s\" is not a member of; this transaction holds %d scope locks already, one for each such scope.",
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
