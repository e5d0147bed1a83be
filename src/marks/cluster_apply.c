/*-------------------------------------------------------------------------
 *
 * cluster_apply.c
 *	  fencing.apply_cluster_mark(): a node takes a scope's row fed by the
 *	  coordinator of its Citus cluster.
 *
 * Fires BEFORE INSERT OR UPDATE on each node's copy of fencing.cluster_marks
 * (a reference table; state/cluster_marks.c writes it).  On the node it
 * runs on, it takes the scope's lock exclusively, so it waits for every
 * writer of the scope in flight there, and makes the node's row of the
 * scope say what the coordinator's says: a mark only rises, unless the
 * coordinator stored it (a reset: "exact"); a scope new to the node is
 * created with the coordinator's owner and kind; its grants become the
 * coordinator's (a grantee that is no role here is left out).  The lock is held until the
 * distributed transaction ends (a prepared one keeps it across a restart of
 * the node), so the node's writers of the scope wait for the change to
 * commit, and then read the new mark.
 *
 * A raise (the fed mark above the node's committed one) first takes the
 * scope's "fed raise" lock, so that a writer of the scope that would wait
 * for it here gives way instead of deadlocking with it across nodes
 * (marks/scope_lock.c).
 *
 * It also records this node's role in fencing.node_state: the coordinator
 * (its own placement, fed in its own backend) or a worker, for good.  A
 * worker fed through a placement other than the one it last took every
 * scope through (Citus made it again when it activated or added the node,
 * copying the coordinator's rows without firing this trigger) first takes
 * every scope that placement holds, which is every scope as the coordinator
 * has it, and then records the placement as fed_via: its marks are current
 * again (state/citus_shards.c refuses writes by scope until then).
 *
 * fencing.take_cluster_lease() is a worker's side of the feed lease
 * (fencing.renew_cluster_lease() on the coordinator calls it on every
 * active worker): the lease is granted from the time this node recorded an
 * offer (on its own clock, lease_offered_at) that the coordinator has
 * since acknowledged in a committed renewal (the offer is named in
 * "acknowledged"), never from the time the grant arrives.  An offer is
 * recorded by this node while a renewal holding its lock on pg_dist_node
 * waits for the reply, so a lease starts before that renewal ends: before
 * the node can be disabled or removed, and before the coordinator records
 * that it was (state/cluster_marks.c waits from then).  A grant delivered
 * late (a connection the coordinator gave up on, its bytes still in the
 * network) starts no later, and an offer recorded by a renewal that failed
 * or rolled back is never acknowledged.  Each call also records a new offer
 * (returned), which the next renewal acknowledges.
 *
 * It acts only as a trigger of fencing.cluster_marks or of its shard (the
 * same name with "_<shard id>"), in the extension's schema and owned by a
 * superuser: a trigger made by hand on another table could otherwise raise
 * any scope.  PUBLIC may not execute it either.  Such a table with columns
 * other than fencing.cluster_marks' (made or altered by hand) is refused
 * (55000), not read by position with the wrong types.
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "executor/spi.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "base/input_checks.h"
#include "marks/scope_lock.h"
#include "marks/scope_mark.h"
#include "security/scope_acl.h"
#include "state/citus_shards.h"
#include "state/cluster_marks.h"
#include "state/extension_state.h"
#include "state/scope_rows.h"

/* fencing.cluster_marks, or a shard of it: cluster_marks_<digits>. */
static bool
is_cluster_marks(Relation rel)
{
	const char *name = RelationGetRelationName(rel);
	size_t		len = strlen(CLUSTER_MARKS_RELNAME);

	if (RelationGetNamespace(rel) != get_namespace_oid(FENCING_SCHEMA, true) ||
		!superuser_arg(rel->rd_rel->relowner) ||
		strncmp(name, CLUSTER_MARKS_RELNAME, len) != 0)
		return false;
	if (name[len] == '\0')
		return true;
	if (name[len] != '_' || name[len + 1] == '\0')
		return false;
	for (const char *c = name + len + 1; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

/* The columns of fencing.cluster_marks, in order, as distribute_marks() makes them. */
static const struct
{
	const char *name;
	Oid			type;
}			cluster_marks_columns[Natts_cluster_marks] = {
	{"scope", TEXTOID},
	{"mark", INT8OID},
	{"owner", NAMEOID},
	{"tokens", TEXTOID},
	{"exact", BOOLOID},
	{"grants", TEXTARRAYOID}
};

/*
 * Rows of "desc" (the table fed, or what was read of it) are read by
 * position with these types: a table of that name made or altered by hand
 * with other columns is refused rather than misread.
 */
static void
require_cluster_marks_columns(TupleDesc desc, const char *relname)
{
	const char *expected = "scope text, mark bigint, owner name, tokens text, exact boolean, grants text[]";

	if (desc->natts != Natts_cluster_marks)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("relation \"%s\" does not have the columns of fencing.cluster_marks", relname),
				 errdetail("It has %d columns (dropped ones included); fencing.cluster_marks has %d: %s.",
						   desc->natts, Natts_cluster_marks, expected),
				 errhint("Let fencing.distribute_marks() create fencing.cluster_marks on the coordinator, "
						 "and do not alter it.")));
	for (int i = 0; i < Natts_cluster_marks; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped ||
			strcmp(NameStr(att->attname), cluster_marks_columns[i].name) != 0 ||
			att->atttypid != cluster_marks_columns[i].type)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("relation \"%s\" does not have the columns of fencing.cluster_marks", relname),
					 att->attisdropped ?
					 errdetail("Its column %d was dropped; fencing.cluster_marks has %s.",
							   i + 1, expected) :
					 errdetail("Its column %d is \"%s\" of type %s; fencing.cluster_marks has %s.",
							   i + 1, NameStr(att->attname), format_type_be(att->atttypid), expected),
					 errhint("Let fencing.distribute_marks() create fencing.cluster_marks on the coordinator, "
							 "and do not alter it.")));
	}
}

static Datum
fed_value(HeapTuple tuple, TupleDesc desc, int attnum, const char *column)
{
	bool		isnull;
	Datum		value = heap_getattr(tuple, attnum, desc, &isnull);

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("column \"%s\" of a fed scope must not be null", column)));
	return value;
}

/*
 * The scope's grants on this node become the fed ones, "privilege:role"
 * ("public" for PUBLIC): those not fed go, those missing come, as granted
 * by the scope's owner.
 */
static void
apply_fed_grants(const char *scope, Datum grants, Oid owner)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"WITH fed AS ("
		"   SELECT pg_catalog.split_part(e, ':', 1) AS privilege,"
		"          pg_catalog.substr(e, pg_catalog.strpos(e, ':') OPERATOR(pg_catalog.+) 1) AS rolename"
		"     FROM pg_catalog.unnest($2::pg_catalog.text[]) AS e),"
		" wanted AS ("
		"   SELECT f.privilege,"
		"          CASE WHEN f.rolename OPERATOR(pg_catalog.=) 'public' THEN 0::pg_catalog.oid ELSE r.oid END AS grantee"
		"     FROM fed AS f LEFT JOIN pg_catalog.pg_roles AS r ON r.rolname OPERATOR(pg_catalog.=) f.rolename"
		"    WHERE f.rolename OPERATOR(pg_catalog.=) 'public' OR r.oid IS NOT NULL),"
		" gone AS ("
		"   DELETE FROM fencing.scope_grants AS g"
		"    WHERE g.scope OPERATOR(pg_catalog.=) $1"
		"      AND NOT EXISTS (SELECT 1 FROM wanted AS w"
		"                       WHERE w.grantee OPERATOR(pg_catalog.=) g.grantee"
		"                         AND w.privilege OPERATOR(pg_catalog.=) g.privilege))"
		"INSERT INTO fencing.scope_grants (scope, grantee, privilege, granted_by)"
		" SELECT $1, w.grantee, w.privilege, $3 FROM wanted AS w ON CONFLICT DO NOTHING";
	Oid			argtypes[3] = {TEXTOID, TEXTARRAYOID, OIDOID};
	Datum		values[3];

	values[0] = CStringGetTextDatum(scope);
	values[1] = grants;
	values[2] = ObjectIdGetDatum(owner);
	(void) fencing_execute_as_owner(&plan, sql, 3, argtypes, values);
}

/* Make this node's row of the scope what the coordinator fed. */
static void
apply_fed_row(const char *scope, int64 mark, Oid owner, bool issued, bool exact, Datum grants,
			  bool show_raise)
{
	ScopeInfo	info;
	int64		old_mark;
	int64		committed;
	int64		scope_id;
	FencingUserContext uctx;

	/*
	 * A raise: shown to this node's writers before waiting for them, so that
	 * one that would wait for it gives way (marks/scope_lock.c).  Not while
	 * a worker takes every scope (take_every_scope()): it admits no writer
	 * by scope until then, and one lock per scope would fill the lock table.
	 */
	if (show_raise)
	{
		committed = scope_mark_committed(scope, &scope_id);
		if (scope_id != 0 && committed != SCOPE_MARK_NONE && mark > committed)
			scope_lock_fed_raise(scope_id);
	}

	/* a scope new to this node is created as the coordinator's owner's */
	fencing_become_role(owner, &uctx);
	old_mark = scope_mark_lock_exclusive(scope,
										 issued ? SCOPE_MISSING_CREATE_ISSUED : SCOPE_MISSING_CREATE_EXTERNAL,
										 SCOPE_PRIV_OWNER, NULL);
	fencing_restore_user(&uctx);

	if (old_mark == SCOPE_MARK_NONE || mark > old_mark || (exact && mark != old_mark))
		scope_mark_store(scope, mark);
	if (scope_info_read(scope, &info) && info.owner != owner)
		scope_rows_set_owner(scope, owner);
	if (info.exists && info.issued != issued)
		scope_rows_set_tokens(scope, issued);
	apply_fed_grants(scope, grants, owner);
}

/* A row of fencing.cluster_marks, checked, as apply_fed_row() takes it. */
typedef struct FedRow
{
	char	   *scope;
	int64		mark;
	Oid			owner;
	bool		issued;
	bool		exact;
	Datum		grants;
} FedRow;

static void
read_fed_row(HeapTuple tuple, TupleDesc desc, FedRow *row)
{
	row->scope = TextDatumGetCString(fed_value(tuple, desc, Anum_cluster_marks_scope, "scope"));
	row->mark = DatumGetInt64(fed_value(tuple, desc, Anum_cluster_marks_mark, "mark"));
	row->owner = get_role_oid(NameStr(*DatumGetName(fed_value(tuple, desc, Anum_cluster_marks_owner, "owner"))),
							  false);
	row->issued = strcmp(TextDatumGetCString(fed_value(tuple, desc, Anum_cluster_marks_tokens, "tokens")),
						 "issued") == 0;
	row->exact = DatumGetBool(fed_value(tuple, desc, Anum_cluster_marks_exact, "exact"));
	row->grants = fed_value(tuple, desc, Anum_cluster_marks_grants, "grants");
	fencing_check_scope_name(row->scope);
	fencing_check_mark(row->scope, row->mark);
}

/*
 * fencing.node_state was written in this transaction: every backend reads
 * the node's state (role, placement, lease) again once it commits.
 */
static void
node_state_changed(void)
{
	Oid			relid = get_relname_relid(NODE_STATE_RELNAME,
										  get_namespace_oid(FENCING_SCHEMA, false));

	if (OidIsValid(relid))
		CacheInvalidateRelcacheByRelid(relid);
}

/*
 * fencing.node_state says role (fed_via: the placement, or InvalidOid; fed
 * with it since this server's start, fed_start, for
 * fencing.citus_worker_start).
 */
static void
record_node_state(const char *role, Oid fed_via)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"INSERT INTO fencing.node_state AS n (role, fed_via, fed_start) VALUES ($1, $2, $3) "
		"ON CONFLICT (only_row) DO UPDATE SET role = excluded.role, fed_via = excluded.fed_via, "
		"fed_start = excluded.fed_start, recorded_at = pg_catalog.clock_timestamp()";
	Oid			argtypes[3] = {TEXTOID, OIDOID, TIMESTAMPTZOID};
	Datum		values[3];

	values[0] = CStringGetTextDatum(role);
	values[1] = ObjectIdGetDatum(fed_via);
	values[2] = TimestampTzGetDatum(PgStartTime);
	(void) fencing_execute_as_owner(&plan, sql, 3, argtypes, values);
	node_state_changed();
}

/*
 * A worker fed through placement rel for the first time takes every scope
 * it holds (the coordinator's, as Citus copied them and as fed since), in
 * the scopes' order, then records rel as the placement it is current by.
 */
static void
take_every_scope(Relation rel)
{
	MemoryContext outer = CurrentMemoryContext;
	List	   *rows = NIL;
	ListCell   *lc;
	char	   *sql;

	sql = psprintf("SELECT scope, mark, owner, tokens, exact, grants FROM %s "
				   "ORDER BY scope USING OPERATOR(pg_catalog.<)",
				   quote_qualified_identifier(FENCING_SCHEMA, RelationGetRelationName(rel)));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read \"%s\"", RelationGetRelationName(rel));
	require_cluster_marks_columns(SPI_tuptable->tupdesc, RelationGetRelationName(rel));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext spi = MemoryContextSwitchTo(outer);
		FedRow	   *row = palloc(sizeof(FedRow));
		HeapTuple	copy = heap_copytuple(SPI_tuptable->vals[i]);

		read_fed_row(copy, SPI_tuptable->tupdesc, row);
		row->grants = PointerGetDatum(PG_DETOAST_DATUM_COPY(row->grants));
		rows = lappend(rows, row);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	foreach(lc, rows)
	{
		FedRow	   *row = lfirst(lc);

		apply_fed_row(row->scope, row->mark, row->owner, row->issued, row->exact, row->grants,
					  false);
	}
	record_node_state("worker", RelationGetRelid(rel));
}

/*
 * This node's role, recorded the first time it is fed: the coordinator's
 * own placement is fed in a backend of a node with group 0 that knows the
 * cluster's nodes; any other node is a worker (a worker whose metadata
 * sync was stopped has group 0 and knows no node).  A worker not current
 * by this placement, or not fed since its server started, takes every
 * scope first (and records its start: fencing.citus_worker_start).
 */
static void
note_fed_node(Relation rel)
{
	int			role;

	/*
	 * without Citus (a table made by hand, as the regression tests do): no
	 * cluster; before ALTER EXTENSION UPDATE to 1.5: nowhere to record it
	 */
	if (!citus_installed() || !citus_node_state_exists())
		return;
	role = citus_node_recorded_role();
	if (role == NODE_ROLE_COORDINATOR)
		return;
	if (role == NODE_ROLE_NONE && citus_node_looks_coordinator())
	{
		record_node_state("coordinator", InvalidOid);
		return;
	}
	if (role != NODE_ROLE_WORKER || citus_node_fed_via() != RelationGetRelid(rel) ||
		!citus_node_fed_since_start())
		take_every_scope(rel);
}

FENCING_FUNCTION(fencing_apply_cluster_mark);

Datum
fencing_apply_cluster_mark(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	HeapTuple	tuple;
	TupleDesc	desc;
	FedRow		row;
	bool		was_applying;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		!TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fencing.apply_cluster_mark() must be fired BEFORE INSERT OR UPDATE FOR EACH ROW")));
	if (!is_cluster_marks(trigdata->tg_relation))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("fencing.apply_cluster_mark() fires only on fencing.cluster_marks"),
				 errdetail("It fired on relation \"%s\".",
						   RelationGetRelationName(trigdata->tg_relation))));
	require_cluster_marks_columns(RelationGetDescr(trigdata->tg_relation),
								  RelationGetRelationName(trigdata->tg_relation));

	tuple = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ? trigdata->tg_newtuple : trigdata->tg_trigtuple;
	desc = RelationGetDescr(trigdata->tg_relation);
	read_fed_row(tuple, desc, &row);

	was_applying = cluster_marks_begin_apply();
	PG_TRY();
	{
		note_fed_node(trigdata->tg_relation);
		apply_fed_row(row.scope, row.mark, row.owner, row.issued, row.exact, row.grants, true);
	}
	PG_FINALLY();
	{
		cluster_marks_end_apply(was_applying);
	}
	PG_END_TRY();

	return PointerGetDatum(tuple);
}

/*
 * fencing.take_cluster_lease(lease interval, acknowledged uuid[]) returns
 * jsonb: on a worker, takes the feed lease from the time of its offer that
 * the coordinator acknowledged (lease '0': no lease), records a new offer,
 * and says {"offer", "granted", "lease", "lease_from"}.  NULL on a worker
 * never fed (no row to hold a lease).  Superusers only (EXECUTE revoked
 * from PUBLIC): the coordinator's renewal calls it.
 */
FENCING_FUNCTION(fencing_take_cluster_lease);

Datum
fencing_take_cluster_lease(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"WITH old AS (SELECT n.lease_offer OPERATOR(pg_catalog.=) ANY ($2) AS acked,"
		"                    n.lease_offered_at"
		"               FROM fencing.node_state AS n"
		"              WHERE n.role OPERATOR(pg_catalog.=) 'worker' FOR UPDATE) "
		"UPDATE fencing.node_state AS n SET "
		"  lease = CASE WHEN $1 OPERATOR(pg_catalog.=) '0'::pg_catalog.interval THEN NULL"
		"               WHEN old.acked THEN $1 ELSE n.lease END,"
		"  lease_from = CASE WHEN $1 OPERATOR(pg_catalog.=) '0'::pg_catalog.interval THEN NULL"
		"                    WHEN old.acked THEN old.lease_offered_at ELSE n.lease_from END,"
		"  lease_offer = pg_catalog.gen_random_uuid(),"
		"  lease_offered_at = pg_catalog.clock_timestamp() "
		"FROM old "
		"RETURNING pg_catalog.jsonb_build_object('offer', n.lease_offer,"
		"  'granted', COALESCE(old.acked, false) AND $1 OPERATOR(pg_catalog.<>) '0'::pg_catalog.interval,"
		"  'lease', n.lease, 'lease_from', n.lease_from)";
	Oid			argtypes[2] = {INTERVALOID, UUIDARRAYOID};
	Datum		values[2];
	Interval   *lease;
	FencingUserContext uctx;
	Datum		result = (Datum) 0;
	bool		isnull = true;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the feed lease must not be null"),
				 errhint("Use '0' for no lease.")));
	lease = PG_GETARG_INTERVAL_P(0);
	if (lease->month != 0 || lease->day != 0 || lease->time < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid feed lease"),
				 errdetail("A feed lease is a duration of zero or more in hours, minutes and seconds, without days or months.")));
	if (!citus_installed())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fencing.take_cluster_lease() needs the citus extension in this database"),
				 errhint("The feed lease is a Citus cluster's; the coordinator's fencing.renew_cluster_lease() calls it.")));
	if (!citus_node_state_exists())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fencing.take_cluster_lease() needs the extension's SQL of version 1.5 or later"),
				 errhint("Run ALTER EXTENSION fencing UPDATE.")));
	if (!citus_node_is_worker())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("fencing.take_cluster_lease() runs on a Citus worker only"),
				 errdetail("This node is the coordinator: it grants the feed lease (fencing.renew_cluster_lease()), it holds none.")));
	/* a worker never fed has no row (and refuses writes by scope anyway) */
	if (citus_node_recorded_role() != NODE_ROLE_WORKER)
		PG_RETURN_NULL();

	values[0] = IntervalPGetDatum(lease);
	values[1] = PG_ARGISNULL(1) ? PointerGetDatum(construct_empty_array(UUIDOID)) : PG_GETARG_DATUM(1);
	fencing_spi_connect_as_owner(&uctx);
	if (fencing_spi_execute(&plan, sql, 2, argtypes, values, false) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "could not record the feed lease");
	if (SPI_processed == 1)
	{
		result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
			result = SPI_datumTransfer(result, false, -1);
	}
	fencing_spi_finish_as_owner(&uctx);
	node_state_changed();
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}
