/*-------------------------------------------------------------------------
 *
 * direct_row.c
 *	  The extension's own rows, read and written without the executor.
 *
 * A lease grant wrote three rows through SPI (the lease, the term, the
 * scope's mark): each statement started an executor, and each UPDATE of
 * fencing.scopes parsed its CHECK constraints again, more than half of the
 * grant's instructions.  The lease functions and the epoch clock write those
 * rows here instead, the way Postgres writes its catalogs: the heap tuple,
 * then its index entries.  So, for the callers:
 *
 *   - no triggers fire: a caller that changes a scope's row does what the
 *     trigger forget_cached_marks would (scope_rows_invalidate);
 *   - no constraints are checked: callers write only values that keep them
 *     (a mark never below 0, a scope's name and tokens never changed);
 *   - no privileges or row security apply: callers checked the scope's
 *     privileges (security/scope_acl.c) before they came here;
 *   - a read-only transaction is refused by the caller
 *     (PreventCommandIfReadOnly), as the executor would.
 *
 * Reads take a fresh snapshot after the relation and index are open:
 * opening a relation accepts invalidation messages, and one consumed after
 * the snapshot would be a change the read does not see.
 *
 *-------------------------------------------------------------------------
 */
#include "state/direct_row.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "storage/itemptr.h"

static HeapTuple
fetch(Relation rel, Oid indexoid, const char *key, bool latest)
{
	Relation	idx = index_open(indexoid, AccessShareLock);
	Snapshot	snapshot = RegisterSnapshot(latest ? GetLatestSnapshot() : GetTransactionSnapshot());
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tuple;

	/* the index's first column, as an attribute of the table */
	ScanKeyInit(&skey, idx->rd_index->indkey.values[0], BTEqualStrategyNumber,
				F_TEXTEQ, CStringGetTextDatum(key));
	scan = systable_beginscan(rel, indexoid, true, snapshot, 1, &skey);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		tuple = heap_copytuple(tuple);
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	index_close(idx, AccessShareLock);
	return tuple;
}

HeapTuple
direct_row_fetch(Relation rel, Oid indexoid, const char *key)
{
	return fetch(rel, indexoid, key, true);
}

void
direct_row_check_serializable(Relation rel, Oid indexoid, const char *key, HeapTuple latest)
{
	HeapTuple	seen;

	if (!IsolationUsesXactSnapshot())
		return;
	seen = fetch(rel, indexoid, key, false);
	if ((seen == NULL) != (latest == NULL) ||
		(seen != NULL && !ItemPointerEquals(&seen->t_self, &latest->t_self)))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to concurrent update"),
				 errdetail("A row of \"%s\" changed after this transaction's snapshot was taken.",
						   RelationGetRelationName(rel))));
	if (seen != NULL)
		heap_freetuple(seen);
}

/* The index entries of a new tuple (inserted, or a version that is not HOT). */
static void
insert_index_entries(Relation rel, HeapTuple tup)
{
	CatalogIndexState indstate = CatalogOpenIndexes(rel);
	TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsHeapTuple);

	ExecStoreHeapTuple(tup, slot, false);
	for (int i = 0; i < indstate->ri_NumIndices; i++)
	{
		Relation	index = indstate->ri_IndexRelationDescs[i];
		IndexInfo  *info = indstate->ri_IndexRelationInfo[i];
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		/* the extension's indexes are plain columns: no expression, no predicate */
		Assert(info->ii_Expressions == NIL && info->ii_Predicate == NIL);
		FormIndexDatum(info, slot, NULL, values, isnull);
		(void) index_insert(index, values, isnull, &tup->t_self, rel,
							index->rd_index->indisunique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
							false, info);
	}
	ExecDropSingleTupleTableSlot(slot);
	CatalogCloseIndexes(indstate);
}

void
direct_row_insert(Relation rel, HeapTuple tup)
{
	simple_heap_insert(rel, tup);
	insert_index_entries(rel, tup);
}

/* Replace oldtup by newtup; false when a concurrent transaction changed it first. */
static bool
update_row(Relation rel, HeapTuple oldtup, HeapTuple newtup)
{
	TM_Result	result;
	TM_FailureData tmfd;
	LockTupleMode lockmode;

	/* waits for a transaction that updates or locks the row meanwhile */
	result = fencing_heap_update(rel, &oldtup->t_self, newtup, GetCurrentCommandId(true),
								 InvalidSnapshot, true, &tmfd, &lockmode);
	if (result == TM_Updated || result == TM_Deleted)
		return false;
	if (result != TM_Ok)
		elog(ERROR, "could not update a row of \"%s\": status %d",
			 RelationGetRelationName(rel), (int) result);
	if (!HeapTupleIsHeapOnly(newtup))
		insert_index_entries(rel, newtup);
	return true;
}

void
direct_row_report_deleted(Relation rel, const char *key)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access due to concurrent delete"),
			 errdetail("The row of fencing scope \"%s\" in \"%s\" was deleted by another transaction.",
					   key, RelationGetRelationName(rel)),
			 errhint("Retry the call.")));
}

void
direct_row_change(Relation rel, Oid indexoid, const char *key, HeapTuple row,
				  int ncols, int *cols, Datum *values, bool *nulls)
{
	for (;;)
	{
		/* the row as the caller read it; read again if someone changed it */
		if (row == NULL)
			row = direct_row_fetch(rel, indexoid, key);
		if (row == NULL)
			direct_row_report_deleted(rel, key);
		if (update_row(rel, row,
					   heap_modify_tuple_by_cols(row, RelationGetDescr(rel),
												 ncols, cols, values, nulls)))
			return;
		row = NULL;
	}
}
