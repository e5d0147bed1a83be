/*-------------------------------------------------------------------------
 *
 * term_retention.c
 *	  fencing.term_retention: a scope's history is bounded as it grows,
 *	  without anyone calling fencing.prune_terms().
 *
 * When a scope is issued a term (fence_next_epoch(), a lease grant), the
 * same transaction deletes up to TERM_RETENTION_PER_TERM of the scope's
 * terms issued before now minus fencing.term_retention, oldest first.  Each
 * term issued thus removes more expired terms than it adds: a backlog
 * shrinks, and a scope keeps the terms of its retention window and little
 * more.  The work is bounded per call whatever the history holds: one
 * descent of the index on (scope, issued_at) and at most
 * TERM_RETENTION_LOOKED_AT entries read from it, only within the expired
 * range; nothing when the setting is off (-1, the default).
 *
 * What is kept, as prune_terms() keeps it: the scope's latest term and
 * every term at or above its mark (the term just issued is both: the
 * older ones are below it, see epoch_clock.c), and the term of its lease.
 * The next term never depends on fencing.terms (I1).
 *
 * Rows are deleted directly (state/direct_row.c's way: no executor, no
 * trigger, no role switch): the caller holds the scope's lock exclusively
 * and has updated its row, so no other issuer of the scope and no
 * prune_terms() (which locks every scope row) deletes them meanwhile; a row
 * another session changed anyway is left alone.  The setting is for
 * superusers (PGC_SUSET): a writer of one scope must not choose how much
 * of its history the owner keeps.
 *
 *-------------------------------------------------------------------------
 */
#include "clock/term_retention.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "state/direct_row.h"
#include "state/extension_state.h"

/* Deleted per term issued at most, and index entries read to find them. */
#define TERM_RETENTION_PER_TERM		4
#define TERM_RETENTION_LOOKED_AT	8

/* The index the expired range is read from (src/sql/concepts/10_clock.sql). */
#define TERM_RETENTION_INDEX		"terms_scope_issued_at"

/* minutes; -1: off */
static int	term_retention_minutes = -1;

void
term_retention_init(void)
{
	DefineCustomIntVariable("fencing.term_retention",
							"Terms of a scope older than this are deleted as the scope is issued new ones (-1: never).",
							"Each term issued deletes at most a few expired terms of its scope; the latest term, "
							"the mark and the lease's term are kept.  fencing.prune_terms() deletes a backlog at once.",
							&term_retention_minutes,
							-1, -1, INT_MAX,
							PGC_SUSET, GUC_UNIT_MIN,
							NULL, NULL, NULL);
}

/* The index on fencing.terms (scope, issued_at), or InvalidOid (older SQL). */
static Oid
issued_at_index(Relation terms)
{
	List	   *indexes = RelationGetIndexList(terms);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		char	   *name = get_rel_name(indexoid);

		if (name != NULL && strcmp(name, TERM_RETENTION_INDEX) == 0)
			found = indexoid;
	}
	list_free(indexes);
	return found;
}

/* The term of the scope's lease, if it has one. */
static bool
lease_term(const char *scope, int64 *term)
{
	Relation	leases = table_open(fencing_relid(FENCING_REL_LEASES), AccessShareLock);
	HeapTuple	row = direct_row_fetch(leases, fencing_relid(FENCING_REL_LEASES_PKEY), scope);
	bool		isnull = true;

	if (row != NULL)
	{
		Datum		d = heap_getattr(row, Anum_leases_term, RelationGetDescr(leases), &isnull);

		if (!isnull)
			*term = DatumGetInt64(d);
		heap_freetuple(row);
	}
	table_close(leases, AccessShareLock);
	return !isnull;
}

void
term_retention_apply(Relation terms, const char *scope, int64 epoch, TimestampTz now)
{
	Oid			indexoid;
	Relation	idx;
	Snapshot	snapshot;
	ScanKeyData skey[2];
	SysScanDesc scan;
	HeapTuple	tuple;
	TimestampTz cutoff;
	int64		leased = 0;
	bool		has_lease;
	int			looked = 0;
	int			deleted = 0;

	if (term_retention_minutes < 0)
		return;
	indexoid = issued_at_index(terms);
	if (!OidIsValid(indexoid))
		return;
	cutoff = now - (TimestampTz) term_retention_minutes * USECS_PER_MINUTE;
	has_lease = lease_term(scope, &leased);

	idx = index_open(indexoid, AccessShareLock);
	/* after the index is open: every change committed before is seen */
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	ScanKeyInit(&skey[0], Anum_terms_scope, BTEqualStrategyNumber, F_TEXTEQ,
				CStringGetTextDatum(scope));
	ScanKeyInit(&skey[1], Anum_terms_issued_at, BTLessStrategyNumber, F_TIMESTAMPTZ_LT,
				TimestampTzGetDatum(cutoff));
	scan = systable_beginscan(terms, indexoid, true, snapshot, 2, skey);
	while (looked < TERM_RETENTION_LOOKED_AT && deleted < TERM_RETENTION_PER_TERM &&
		   HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		bool		isnull;
		int64		term = DatumGetInt64(heap_getattr(tuple, Anum_terms_epoch,
													  RelationGetDescr(terms), &isnull));
		TM_FailureData tmfd;

		looked++;
		/* the latest term and the mark are epoch; a lease's term stays */
		if (isnull || term >= epoch || (has_lease && term == leased))
			continue;
		if (table_tuple_delete(terms, &tuple->t_self, GetCurrentCommandId(true),
							   snapshot, InvalidSnapshot, false, &tmfd, false) == TM_Ok)
			deleted++;
	}
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	index_close(idx, AccessShareLock);
	if (deleted > 0)
		CommandCounterIncrement();
}
