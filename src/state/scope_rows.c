/*-------------------------------------------------------------------------
 *
 * scope_rows.c
 *	  Every write of a row of fencing.scopes, the registry of scopes: its
 *	  creation, its mark, its latest term, its owner and its tokens.
 *
 * Whatever a write changes, every backend must forget what it cached of the
 * scope (its mark, and the id and owner it is locked by: mark_cache.c) once
 * the write commits.  Each function here says so itself
 * (scope_rows_invalidate), however it writes: through SQL, where the
 * trigger forget_cached_marks says it too, for the writes that need the
 * executor (a new row meets its concurrent creators on the unique name:
 * INSERT ... ON CONFLICT; a mark raised only if higher), or directly
 * (state/direct_row.c) for the epoch clock's write of a term, which fires no
 * trigger.  Callers hold what each write needs: the scope's privilege, and
 * its lock in exclusive mode for a change of the mark (scope_mark.c).
 * Where marks are a Citus cluster's, each change of a mark, term, owner or
 * kind also goes to every node (state/cluster_marks.c), or, on a worker, is
 * refused.
 *
 *-------------------------------------------------------------------------
 */
#include "state/scope_rows.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/timestamp.h"

#include "base/scope_tables.h"
#include "state/cluster_marks.h"
#include "state/direct_row.h"
#include "state/extension_state.h"

/*
 * A transaction that changes more scopes than this sends one message for
 * the whole table instead of one per scope (bounded sinval traffic).
 */
#define MARK_INVAL_MAX	64

/* Scopes this transaction sent a message for; -1 once it sent the table's. */
static int	inval_sent = 0;

/* Register a relcache invalidation of "relid", which need not be a relation. */
static void
invalidate_relid(Oid relid)
{
	/* a pg_class tuple as CacheInvalidateRelcacheByTuple reads it: oid, relisshared */
	union
	{
		HeapTupleHeaderData hdr;
		char		data[MAXALIGN(SizeofHeapTupleHeader) + sizeof(FormData_pg_class)];
	}			buf;
	HeapTupleData tuple;
	Form_pg_class classform;

	memset(&buf, 0, sizeof(buf));
	buf.hdr.t_hoff = MAXALIGN(SizeofHeapTupleHeader);
	tuple.t_data = &buf.hdr;
	tuple.t_len = sizeof(buf);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = RelationRelationId;
	classform = (Form_pg_class) GETSTRUCT(&tuple);
	classform->oid = relid;
	classform->relisshared = false;
	CacheInvalidateRelcacheByTuple(&tuple);
}

void
scope_rows_invalidate(const char *scope)
{
	if (inval_sent >= 0 && inval_sent < MARK_INVAL_MAX)
	{
		invalidate_relid(scope_inval_id(scope));
		inval_sent++;
		return;
	}
	/*
	 * Too many: the whole table, registered again each time (a duplicate is
	 * not added twice), so that it stays registered in whatever
	 * subtransaction survives.
	 */
	inval_sent = -1;
	invalidate_relid(fencing_scopes_relid());
}

void
scope_rows_invalidate_all(void)
{
	invalidate_relid(fencing_scopes_relid());
}

void
scope_rows_at_xact_end(void)
{
	inval_sent = 0;
}

bool
scope_rows_create(const char *scope, Oid owner, bool issued)
{
	static SPIPlanPtr plan = NULL;
	static SPIPlanPtr legacy_plan = NULL;
	static const char *sql =
		"INSERT INTO fencing.scopes (scope, mark, owner, tokens) VALUES ($1, 0, $2, $3) "
		"ON CONFLICT (scope) DO NOTHING";
	static const char *legacy_sql =
		"INSERT INTO fencing.scopes (scope, mark) VALUES ($1, 0) "
		"ON CONFLICT (scope) DO NOTHING";
	Oid			argtypes[3] = {TEXTOID, OIDOID, TEXTOID};
	Datum		values[3];
	FencingUserContext uctx;
	bool		inserted;

	values[0] = CStringGetTextDatum(scope);
	values[1] = ObjectIdGetDatum(owner);
	values[2] = CStringGetTextDatum(issued ? "issued" : "external");
	fencing_spi_connect_as_owner(&uctx);
	if (fencing_sql_at_least(FENCING_SQL_1_2))
		fencing_spi_execute(&plan, sql, 3, argtypes, values, false);
	else
		fencing_spi_execute(&legacy_plan, legacy_sql, 1, argtypes, values, false);
	inserted = SPI_processed > 0;
	fencing_spi_finish_as_owner(&uctx);
	if (inserted)
	{
		scope_rows_invalidate(scope);
		cluster_marks_feed(scope, false);
	}
	return inserted;
}

void
scope_rows_remove_created(const char *scope)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"DELETE FROM fencing.scopes AS s WHERE s.scope OPERATOR(pg_catalog.=) $1";
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];

	values[0] = CStringGetTextDatum(scope);
	(void) fencing_execute_as_owner(&plan, sql, 1, argtypes, values);
	scope_rows_invalidate(scope);
}

/* One UPDATE of the scope's row through SQL: $1 is the scope, $2 "value". */
static void
update_row(SPIPlanPtr *plan, const char *sql, const char *scope, Oid type, Datum value)
{
	Oid			argtypes[2] = {TEXTOID, type};
	Datum		values[2];

	values[0] = CStringGetTextDatum(scope);
	values[1] = value;
	(void) fencing_execute_as_owner(plan, sql, 2, argtypes, values);
	scope_rows_invalidate(scope);
}

void
scope_rows_set_mark(const char *scope, int64 mark, bool raise_only)
{
	static SPIPlanPtr raise_plan = NULL;
	static SPIPlanPtr store_plan = NULL;

	if (raise_only)
		update_row(&raise_plan,
				   "UPDATE fencing.scopes AS s "
				   "SET mark = $2, mark_raised_at = pg_catalog.now() "
				   "WHERE s.scope OPERATOR(pg_catalog.=) $1 AND s.mark OPERATOR(pg_catalog.<) $2",
				   scope, INT8OID, Int64GetDatum(mark));
	else
		update_row(&store_plan,
				   "UPDATE fencing.scopes AS s "
				   "SET mark = $2, mark_raised_at = pg_catalog.now() "
				   "WHERE s.scope OPERATOR(pg_catalog.=) $1",
				   scope, INT8OID, Int64GetDatum(mark));
	cluster_marks_feed(scope, !raise_only);
}

void
scope_rows_set_term(Relation scopes, const char *scope, HeapTuple row,
					int64 epoch, Datum holder, TimestampTz now)
{
	int			cols[] = {Anum_scopes_mark, Anum_scopes_mark_raised_at, Anum_scopes_epoch,
						  Anum_scopes_holder, Anum_scopes_epoch_issued_at,
						  Anum_scopes_terms_issued};
	Datum		values[lengthof(cols)];
	bool		nulls[lengthof(cols)] = {0};
	bool		isnull;

	/* the row read under the scope lock (terms_issued changes only under it) */
	if (row == NULL)
		row = direct_row_fetch(scopes, fencing_scopes_pkey_relid(), scope);
	if (row == NULL)
		direct_row_report_deleted(scopes, scope);
	values[0] = Int64GetDatum(epoch);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int64GetDatum(epoch);
	values[3] = holder;
	values[4] = TimestampTzGetDatum(now);
	values[5] = Int64GetDatum(DatumGetInt64(heap_getattr(row, Anum_scopes_terms_issued,
														  RelationGetDescr(scopes), &isnull)) + 1);
	direct_row_change(scopes, fencing_scopes_pkey_relid(), scope, row,
					  lengthof(cols), cols, values, nulls);
	scope_rows_invalidate(scope);
	cluster_marks_feed(scope, false);
}

void
scope_rows_set_owner(const char *scope, Oid owner)
{
	static SPIPlanPtr plan = NULL;

	update_row(&plan, "UPDATE fencing.scopes SET owner = $2 WHERE scope OPERATOR(pg_catalog.=) $1",
			   scope, OIDOID, ObjectIdGetDatum(owner));
	cluster_marks_feed(scope, false);
}

void
scope_rows_set_tokens(const char *scope, bool issued)
{
	static SPIPlanPtr plan = NULL;

	update_row(&plan, "UPDATE fencing.scopes SET tokens = $2 WHERE scope OPERATOR(pg_catalog.=) $1",
			   scope, TEXTOID, CStringGetTextDatum(issued ? "issued" : "external"));
	cluster_marks_feed(scope, false);
}
