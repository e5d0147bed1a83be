/*-------------------------------------------------------------------------
 *
 * cluster_marks.c
 *	  The marks of a Citus cluster: one clock, on the coordinator, whose every
 *	  change reaches every node in the transaction that makes it.
 *
 * On a Citus cluster the fence's triggers fire on the shards, in the
 * workers' backends, against each worker's own fencing.scopes.  Once
 * fencing.distribute_marks() has made fencing.cluster_marks (a reference
 * table: one copy per node, written by Citus in one distributed transaction
 * under two-phase commit), the registry works this way:
 *
 *   - a change of a scope's row on the coordinator (a term, a takeover, a
 *     lease grant, a reset, the failover fence, a new owner) also upserts
 *     the scope's row into fencing.cluster_marks, here, in the changing
 *     transaction and under its exclusive scope lock;
 *   - the trigger on each node's copy (marks/cluster_apply.c) takes that
 *     node's exclusive scope lock, so it waits for the node's in-flight
 *     writers of the scope, and writes the node's own row; the change
 *     commits everywhere or nowhere, and a takeover returns only once no
 *     writer of the old term is in flight on any node;
 *   - on a worker, any other change of a mark is refused: workers never
 *     issue terms, create scopes or raise marks by themselves, and a node
 *     once fed as a worker is recorded as one (fencing.node_state), so that
 *     this holds after Citus's metadata stops saying so;
 *   - no write to a table raises a mark or creates a scope, on any node
 *     (marks/scope_mark.c asks cluster_marks_enabled()).
 *
 * The feed runs as the owner of the extension's tables (a superuser: Citus
 * connects to the other nodes as that role) and, like every statement of
 * ours, is fixed SQL over our own table.  Feeds of different scopes do not
 * wait for each other (the upsert is declared commutative to Citus); feeds
 * of one scope are serialized by the scope's exclusive lock.
 *
 *-------------------------------------------------------------------------
 */
#include "state/cluster_marks.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "state/citus_shards.h"
#include "state/extension_state.h"

/* Set while marks/cluster_apply.c writes a fed row: it is not fed again. */
static bool applying = false;

/*
 * A superuser's fencing.cluster_marks: no other role can turn a database
 * into a cluster's.  Asked by every write by scope on a Citus worker, so a
 * yes is remembered for the rest of the transaction (the table then exists
 * for it: a feed would fail on a dropped one); a no is asked again, so that
 * a change fed later in a transaction that made the table is not missed.
 */
static LocalTransactionId enabled_in = InvalidLocalTransactionId;

bool
cluster_marks_enabled(void)
{
	Oid			nsp;
	Oid			relid;
	HeapTuple	tuple;
	bool		enabled = false;

	if (enabled_in == FENCING_MY_LXID)
		return true;
	/* a node fed as a worker stays one, its copy of the table dropped or not */
	if (citus_node_recorded_role() == NODE_ROLE_WORKER)
	{
		enabled_in = FENCING_MY_LXID;
		return true;
	}
	nsp = get_namespace_oid(FENCING_SCHEMA, true);
	relid = OidIsValid(nsp) ? get_relname_relid(CLUSTER_MARKS_RELNAME, nsp) : InvalidOid;
	if (!OidIsValid(relid))
		return false;
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (HeapTupleIsValid(tuple))
	{
		enabled = superuser_arg(((Form_pg_class) GETSTRUCT(tuple))->relowner);
		ReleaseSysCache(tuple);
	}
	if (enabled)
		enabled_in = FENCING_MY_LXID;
	return enabled;
}

bool
cluster_marks_begin_apply(void)
{
	bool		was = applying;

	applying = true;
	return was;
}

void
cluster_marks_end_apply(bool was_applying)
{
	applying = was_applying;
}

void
cluster_marks_require_coordinator(const char *scope)
{
	if (!applying && citus_node_is_worker() && cluster_marks_enabled())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("scope \"%s\" changes only on the Citus coordinator", scope),
				 errdetail("This node is a worker of a Citus cluster whose marks are distributed "
						   "(fencing.cluster_marks): it takes its scopes, their marks and grants from the coordinator."),
				 errhint("Call the function on the coordinator: it changes the scope on every node.")));
}

void
cluster_marks_feed(const char *scope, bool exact)
{
	static SPIPlanPtr read_plan = NULL;
	static const char *read_sql =
		"SELECT s.mark, pg_catalog.pg_get_userbyid(COALESCE(s.owner, c.relowner))::pg_catalog.name, "
		"COALESCE(s.tokens, 'external'), "
		"COALESCE((SELECT pg_catalog.array_agg(g.privilege OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) "
		"                 CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'public' "
		"                 ELSE pg_catalog.pg_get_userbyid(g.grantee)::pg_catalog.text END "
		"                 ORDER BY g.privilege, g.grantee) "
		"          FROM fencing.scope_grants AS g WHERE g.scope OPERATOR(pg_catalog.=) s.scope), "
		"         '{}'::pg_catalog.text[]) "
		"FROM fencing.scopes AS s, pg_catalog.pg_class AS c "
		"WHERE s.scope OPERATOR(pg_catalog.=) $1 AND c.oid OPERATOR(pg_catalog.=) 'fencing.scopes'::pg_catalog.regclass";
	static SPIPlanPtr write_plan = NULL;
	static const char *write_sql =
		"INSERT INTO fencing.cluster_marks AS c (scope, mark, owner, tokens, exact, grants) "
		"VALUES ($1, $2, $3, $4, $5, $6) "
		"ON CONFLICT (scope) DO UPDATE SET mark = excluded.mark, owner = excluded.owner, "
		"tokens = excluded.tokens, exact = excluded.exact, grants = excluded.grants";
	Oid			read_types[1] = {TEXTOID};
	Oid			write_types[6] = {TEXTOID, INT8OID, NAMEOID, TEXTOID, BOOLOID, TEXTARRAYOID};
	Datum		values[6];
	bool		isnull;
	int			nest_level;
	FencingUserContext uctx;

	if (applying || !cluster_marks_enabled())
		return;
	cluster_marks_require_coordinator(scope);

	/*
	 * Read the row as this transaction wrote it, then send it: a reference
	 * table takes an INSERT ... SELECT from a local table only through the
	 * coordinator's own executor, and one row is all there is.
	 */
	/* the direct write of a term (state/direct_row.c) is seen from here on */
	CommandCounterIncrement();
	fencing_spi_connect_as_owner(&uctx);
	values[0] = CStringGetTextDatum(scope);
	(void) fencing_spi_execute(&read_plan, read_sql, 1, read_types, values, true);
	if (SPI_processed != 1)
		elog(ERROR, "scope \"%s\" vanished while its change was fed to the cluster", scope);
	/* the read's tuples last until SPI_finish, after the write */
	for (int i = 1; i <= 3; i++)
		values[i] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i, &isnull);
	values[4] = BoolGetDatum(exact);
	values[5] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull);

	/*
	 * Citus serializes every write of a reference table behind one lock on
	 * its shard, held to the end of the transaction: one tenant's takeover
	 * would stall every other tenant's.  Upserts of different scopes
	 * commute, and those of one scope are serialized by its exclusive lock
	 * here, so Citus is told they commute, for this statement only.
	 */
	nest_level = NewGUCNestLevel();
	(void) set_config_option("citus.all_modifications_commutative", "on",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	(void) fencing_spi_execute(&write_plan, write_sql, 6, write_types, values, false);
	AtEOXact_GUC(true, nest_level);
	fencing_spi_finish_as_owner(&uctx);
}

/* fencing.cluster_node_marks() returns text: why this worker's marks are not current, or NULL */
FENCING_FUNCTION(fencing_cluster_node_marks);

Datum
fencing_cluster_node_marks(PG_FUNCTION_ARGS)
{
	const char *why;

	if (!citus_node_is_worker() || !cluster_marks_enabled())
		PG_RETURN_NULL();
	why = citus_node_marks_stale();
	if (why == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(why));
}
