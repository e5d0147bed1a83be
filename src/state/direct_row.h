/*-------------------------------------------------------------------------
 *
 * direct_row.h
 *	  The extension's own rows, read and written without the executor.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DIRECT_ROW_H
#define DIRECT_ROW_H

#include "fencing.h"

#include "access/htup.h"
#include "utils/relcache.h"

/*
 * The row whose first key column of index indexoid is the text key, read
 * with a fresh snapshot taken after the relation was opened; a copy, or
 * NULL.
 */
extern HeapTuple direct_row_fetch(Relation rel, Oid indexoid, const char *key);

/*
 * Under REPEATABLE READ or SERIALIZABLE, fail with a serialization failure
 * (40001) unless the transaction's snapshot sees the row "latest" (from
 * direct_row_fetch) as it is, or sees no row when latest is NULL: what
 * SELECT ... FOR UPDATE does with a row changed after the snapshot.
 */
extern void direct_row_check_serializable(Relation rel, Oid indexoid, const char *key,
										  HeapTuple latest);

/* Insert a row and its index entries (unique indexes checked). */
extern void direct_row_insert(Relation rel, HeapTuple tup);

/*
 * Set columns cols (attribute numbers) of the row of key to values/nulls:
 * row is the row as the caller read it (or NULL: read it here).  When a
 * concurrent transaction updated the row first and committed, the row is
 * read again and the same columns set; when it deleted it, 40001.
 */
extern void direct_row_change(Relation rel, Oid indexoid, const char *key, HeapTuple row,
							  int ncols, int *cols, Datum *values, bool *nulls);

/* The row of fencing scope key was deleted under the caller: 40001. */
pg_noreturn extern void direct_row_report_deleted(Relation rel, const char *key);

#endif							/* DIRECT_ROW_H */
