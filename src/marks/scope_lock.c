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
 * So the locks form a two-level hierarchy, as table and row locks do, the
 * table being fencing.scopes itself:
 *
 *   fine    the first SCOPE_LOCKS_MAX scopes a transaction locks: the table
 *           in an intention mode (RowShareLock for a share, RowExclusiveLock
 *           for a raise), then the scope's own lock;
 *   coarse  every scope after those: the table alone, in ShareLock (every
 *           scope it writes at its mark) or ExclusiveLock (raising any).
 *
 * Conflicts are the table-lock ones: a coarse share waits for, and holds
 * off, raises (RowExclusive), not writers at the mark (RowShare); a coarse
 * exclusive holds off every writer.  So I3 holds whichever level each
 * transaction uses, and I6 too (writers at the mark never conflict).  A
 * transaction holds at most SCOPE_LOCKS_MAX scope locks plus two on the
 * table.  The intention modes are weak relation locks, which Postgres grants
 * from the backend's fast-path slots without touching the shared lock table:
 * the common write pays a few hundred instructions for the hierarchy.  The
 * price: while a bulk transaction is open, takeovers (or, if it raises
 * marks, all writers) wait until it ends; two bulk transactions that both
 * raise marks may deadlock (Postgres aborts one, 40P01).
 *
 * Scope locks are advisory-type tags with a field4 that pg_advisory_lock()
 * cannot produce, 0xFE01 (pg_locks shows objsubid -511).
 *
 *-------------------------------------------------------------------------
 */
#include "marks/scope_lock.h"

#include "common/hashfn.h"
#include "miscadmin.h"

#include "state/extension_state.h"

#define FENCING_LOCKTAG_SCOPE	0xFE01

/* Scope locks a transaction takes before it locks the whole table. */
#define SCOPE_LOCKS_MAX		32

/* Fine scope locks this transaction (or its open subtransactions) took. */
static int	fine_locks = 0;

static uint64
scope_hash(const char *scope)
{
	return hash_bytes_extended((const unsigned char *) scope, (int) strlen(scope), 0);
}

static void
scope_tag(LOCKTAG *tag, uint64 h)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (h >> 32), (uint32) h,
						 FENCING_LOCKTAG_SCOPE);
}

/* The upper level: fencing.scopes, as a relation lock. */
static void
table_tag(LOCKTAG *tag)
{
	SET_LOCKTAG_RELATION(*tag, MyDatabaseId, fencing_scopes_relid());
}

static LOCKMODE
intention_mode(LOCKMODE mode)
{
	return mode == ShareLock ? RowShareLock : RowExclusiveLock;
}

LockAcquireResult
scope_lock_acquire(const char *scope, LOCKMODE mode, bool coarse)
{
	LOCKTAG		table;
	LOCKTAG		tag;
	LockAcquireResult res;

	Assert(mode == ShareLock || mode == ExclusiveLock);
	table_tag(&table);
	if (coarse)
		return LockAcquire(&table, mode, false, false);

	(void) LockAcquire(&table, intention_mode(mode), false, false);
	scope_tag(&tag, scope_hash(scope));
	res = LockAcquire(&tag, mode, false, false);
	if (res == LOCKACQUIRE_OK)
		fine_locks++;
	return res;
}

void
scope_lock_release(const char *scope, LOCKMODE mode)
{
	LOCKTAG		table;
	LOCKTAG		tag;

	scope_tag(&tag, scope_hash(scope));
	LockRelease(&tag, mode, false);
	table_tag(&table);
	LockRelease(&table, intention_mode(mode), false);
	fine_locks--;
}

bool
scope_lock_next_is_coarse(void)
{
	return fine_locks >= SCOPE_LOCKS_MAX;
}

void
scope_lock_forget(void)
{
	fine_locks = 0;
}
