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
 * Where a row is.  A lease or a scope is read and written again and again
 * by the same backend (a holder renewing, a leader taking over), and each
 * read went down the index and along the row's chain of updated versions,
 * one visibility check per version, to the one the snapshot sees.  So the
 * backend remembers where it last saw or wrote each row (the item pointer
 * of that version) and, on the next read, first looks there alone, with
 * the same fresh snapshot: the version found there is the row when the
 * snapshot sees it and it carries the key, since a snapshot sees at most
 * one version of the row of a key (the key is unique).  Anything else (the
 * row was updated since, by this backend or another, its slot pruned or
 * reused, the table rewritten or truncated) sends the read down the index
 * as before.  Only a fresh (latest) snapshot reads so; what the read
 * returns is what the index scan would.
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
#include "common/hashfn.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "storage/bufmgr.h"
#include "storage/itemptr.h"

/* Where this backend last saw or wrote the row of a key (see the header). */
typedef struct RowPlaceKey
{
	Oid			relid;
	char		key[FENCING_SCOPE_MAX_LEN + 1];	/* NUL-terminated */
} RowPlaceKey;

typedef struct RowPlace
{
	RowPlaceKey k;				/* hash key */
	Oid			relfilenode;	/* the table's file when the place was noted */
	AttrNumber	keyattr;		/* the key's column in the table */
	ItemPointerData tid;		/* the version last seen or written */
} RowPlace;

static HTAB *row_places = NULL;

/* A backend that has seen this many rows starts afresh. */
#define ROW_PLACES_MAX	1024

/* Hashes and compares the key as far as its text goes, not its padding. */
static uint32
place_hash(const void *key, Size keysize)
{
	const RowPlaceKey *k = key;

	return hash_bytes((const unsigned char *) k->key, (int) strlen(k->key)) ^ k->relid;
}

static int
place_match(const void *key1, const void *key2, Size keysize)
{
	const RowPlaceKey *a = key1;
	const RowPlaceKey *b = key2;

	return a->relid == b->relid ? strcmp(a->key, b->key) : 1;
}

static bool
place_key(RowPlaceKey *k, Relation rel, const char *key)
{
	size_t		len = strlen(key);

	if (len > FENCING_SCOPE_MAX_LEN)
		return false;
	k->relid = RelationGetRelid(rel);
	memcpy(k->key, key, len + 1);
	return true;
}

static RowPlace *
find_place(Relation rel, const char *key)
{
	RowPlaceKey k;

	if (row_places == NULL || !place_key(&k, rel, key))
		return NULL;
	return hash_search(row_places, &k, HASH_FIND, NULL);
}

static void
note_place(Relation rel, const char *key, AttrNumber keyattr, ItemPointer tid)
{
	RowPlaceKey k;
	RowPlace   *place;

	if (!place_key(&k, rel, key))
		return;
	if (row_places != NULL && hash_get_num_entries(row_places) >= ROW_PLACES_MAX)
	{
		hash_destroy(row_places);
		row_places = NULL;
	}
	if (row_places == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(RowPlaceKey);
		ctl.entrysize = sizeof(RowPlace);
		ctl.hash = place_hash;
		ctl.match = place_match;
		ctl.hcxt = TopMemoryContext;
		row_places = hash_create("fencing row places", 64, &ctl,
								 HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
	}
	place = hash_search(row_places, &k, HASH_ENTER, NULL);
	place->relfilenode = rel->rd_rel->relfilenode;
	place->keyattr = keyattr;
	place->tid = *tid;
}

/*
 * The row of key at the place this backend noted for it, if the snapshot
 * sees the version there and it carries the key; else NULL.
 */
static HeapTuple
fetch_at_place(Relation rel, const char *key, Snapshot snapshot)
{
	RowPlace   *place = find_place(rel, key);
	HeapTupleData tuple;
	Buffer		buffer;
	HeapTuple	copy = NULL;
	bool		isnull;
	Datum		d;

	if (place == NULL || place->relfilenode != rel->rd_rel->relfilenode ||
		ItemPointerGetBlockNumber(&place->tid) >= RelationGetNumberOfBlocks(rel))
		return NULL;
	tuple.t_self = place->tid;
	if (!heap_fetch(rel, snapshot, &tuple, &buffer, false))
		return NULL;
	d = heap_getattr(&tuple, place->keyattr, RelationGetDescr(rel), &isnull);
	if (!isnull)
	{
		text	   *t = DatumGetTextPP(d);
		size_t		len = strlen(key);

		if (VARSIZE_ANY_EXHDR(t) == len && memcmp(VARDATA_ANY(t), key, len) == 0)
			copy = heap_copytuple(&tuple);
		if ((Pointer) t != DatumGetPointer(d))
			pfree(t);
	}
	ReleaseBuffer(buffer);
	return copy;
}

static HeapTuple
fetch(Relation rel, Oid indexoid, const char *key, bool latest)
{
	Relation	idx;
	Snapshot	snapshot;
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tuple;
	AttrNumber	keyattr;

	if (latest)
	{
		snapshot = RegisterSnapshot(GetLatestSnapshot());
		tuple = fetch_at_place(rel, key, snapshot);
		if (tuple != NULL)
		{
			UnregisterSnapshot(snapshot);
			return tuple;
		}
		UnregisterSnapshot(snapshot);
	}

	idx = index_open(indexoid, AccessShareLock);
	snapshot = RegisterSnapshot(latest ? GetLatestSnapshot() : GetTransactionSnapshot());
	/* the index's first column, as an attribute of the table */
	keyattr = idx->rd_index->indkey.values[0];
	ScanKeyInit(&skey, keyattr, BTEqualStrategyNumber, F_TEXTEQ, CStringGetTextDatum(key));
	scan = systable_beginscan(rel, indexoid, true, snapshot, 1, &skey);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		tuple = heap_copytuple(tuple);
		if (latest)
			note_place(rel, key, keyattr, &tuple->t_self);
	}
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
		HeapTuple	newtup;

		/* the row as the caller read it; read again if someone changed it */
		if (row == NULL)
			row = direct_row_fetch(rel, indexoid, key);
		if (row == NULL)
			direct_row_report_deleted(rel, key);
		newtup = heap_modify_tuple_by_cols(row, RelationGetDescr(rel),
										   ncols, cols, values, nulls);
		if (update_row(rel, row, newtup))
		{
			RowPlace   *place = find_place(rel, key);

			/* the new version is where the next read looks first */
			if (place != NULL)
				place->tid = newtup->t_self;
			return;
		}
		row = NULL;
	}
}
