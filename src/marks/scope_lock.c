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
 * So the locks form a two-level hierarchy, as table and row locks do: each
 * scope hashes to one of SCOPE_LOCK_STRIPES stripes.
 *
 *   fine    the first SCOPE_LOCKS_MAX scopes a transaction locks: the
 *           stripe in an intention mode (RowShareLock for a share,
 *           RowExclusiveLock for a raise), then the scope's own lock;
 *   coarse  every scope after those: the stripe alone, in ShareLock (all
 *           scopes of the stripe at their mark) or ExclusiveLock (raising
 *           any of them).
 *
 * Conflicts are the table-lock ones: a coarse share waits for, and holds
 * off, raises of the stripe's scopes (RowExclusive), not writers at the
 * mark (RowShare); a coarse exclusive holds off every writer of the
 * stripe.  So I3 holds whichever level each transaction uses, and I6 too
 * (writers at the mark never conflict).  A transaction holds at most
 * SCOPE_LOCKS_MAX scope locks plus two per stripe.  The price: a bulk
 * transaction makes takeovers of other scopes of its stripes wait until it
 * ends (with thousands of scopes: every stripe); two bulk transactions that
 * both raise marks in one stripe may deadlock (Postgres aborts one, 40P01).
 *
 * The tags are advisory-type tags with a field4 that pg_advisory_lock()
 * cannot produce: 0xFE01 for a scope, 0xFE03 for a stripe (pg_locks shows
 * objsubid -511 and -509).
 *
 *-------------------------------------------------------------------------
 */
#include "marks/scope_lock.h"

#include "common/hashfn.h"
#include "miscadmin.h"

#define FENCING_LOCKTAG_SCOPE	0xFE01
#define FENCING_LOCKTAG_STRIPE	0xFE03

/* Scope locks a transaction takes before it locks by stripe. */
#define SCOPE_LOCKS_MAX		32
#define SCOPE_LOCK_STRIPES	16

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

static void
stripe_tag(LOCKTAG *tag, uint64 h)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, 0, (uint32) (h % SCOPE_LOCK_STRIPES),
						 FENCING_LOCKTAG_STRIPE);
}

static LOCKMODE
intention_mode(LOCKMODE mode)
{
	return mode == ShareLock ? RowShareLock : RowExclusiveLock;
}

LockAcquireResult
scope_lock_acquire(const char *scope, LOCKMODE mode, bool coarse)
{
	uint64		h = scope_hash(scope);
	LOCKTAG		stripe;
	LOCKTAG		tag;
	LockAcquireResult res;

	Assert(mode == ShareLock || mode == ExclusiveLock);
	stripe_tag(&stripe, h);
	if (coarse)
		return LockAcquire(&stripe, mode, false, false);

	(void) LockAcquire(&stripe, intention_mode(mode), false, false);
	scope_tag(&tag, h);
	res = LockAcquire(&tag, mode, false, false);
	if (res == LOCKACQUIRE_OK)
		fine_locks++;
	return res;
}

void
scope_lock_release(const char *scope, LOCKMODE mode)
{
	uint64		h = scope_hash(scope);
	LOCKTAG		stripe;
	LOCKTAG		tag;

	scope_tag(&tag, h);
	LockRelease(&tag, mode, false);
	stripe_tag(&stripe, h);
	LockRelease(&stripe, intention_mode(mode), false);
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
