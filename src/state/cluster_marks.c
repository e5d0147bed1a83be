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
 * The feed lease (opt-in, fencing.set_cluster_lease()): a worker cut off
 * from the coordinator by the network, then disabled or removed, no longer
 * gets the feeds, and nothing tells it so: its own clients could write at a
 * term the coordinator fenced.  Under a lease, each worker refuses writes by
 * scope once lease has passed, on its own clock, since its lease started
 * (state/citus_shards.c); fencing.renew_cluster_lease() renews it on every
 * active worker.  A change of a scope fed here first waits, while any node
 * that may hold a lease (fencing.cluster_lease_nodes) is no active primary
 * in pg_dist_node, until lapsed_at + longest * 1.1 + 1 s, lapsed_at being
 * when a feed or a renewal first saw it so (a renewal records it and
 * commits it at once; a feed counts from when it saw it, unrecorded, and
 * records that time once it has waited, in the feeding transaction, holding
 * no row across the wait: so takeovers cancelled during their wait by a
 * statement_timeout shorter than it, whose records roll back, do not start
 * it over on every try once a renewal has recorded it; a record that rolls
 * back only makes a later change wait longer), and longest the longest
 * lease ever set.  Why that is enough:
 *   - a change of a scope under a lease takes SHARE on pg_dist_node
 *     before it reads which nodes are active primaries, and keeps it to
 *     its end: a node it finds active is fed by it (or the change fails),
 *     since disabling, removing or activating it (EXCLUSIVE) and moving
 *     it (citus_update_node: ROW EXCLUSIVE) wait for the change to end;
 *   - a renewal holds ROW SHARE on pg_dist_node from before it reads the
 *     active workers until it ends; citus_disable_node, citus_remove_node
 *     and citus_activate_node take EXCLUSIVE on it (Citus 13.0.5,
 *     ModifiableWorkerNode() and ActivateNodeList()), which conflicts, so
 *     every renewal that reached the node ended before the change that
 *     made it inactive, and that change committed before a feed or a
 *     later renewal (after its lock) saw it, before lapsed_at;
 *   - the worker measures its lease from the time it recorded an offer
 *     that a committed renewal acknowledged (marks/cluster_apply.c): the
 *     offer was recorded while that renewal waited for it, before lapsed_at,
 *     however late a grant arrives;
 *     (a node moved by citus_update_node is no active primary under its
 *     old name; a renewal that reached that name read it before the move
 *     committed, and the offer it grants from was recorded earlier still);
 *   - so the lease runs out on the worker's clock at most longest after
 *     lapsed_at; the clocks' rates (not their offsets) agree within 10%, so
 *     longest * 1.1 + 1 s on the coordinator's clock covers it, and the
 *     worker re-checks the lease before each commit of a write it admitted
 *     under it.
 * A wall-clock jump backwards on a worker extends its lease by the jump;
 * forwards, shortens it.  Without a lease (no row, or longest '0') a feed
 * costs one read of the one-row table.
 *
 *-------------------------------------------------------------------------
 */
#include "state/cluster_marks.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

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

/*
 * Under a feed lease: wait until the lease of each node that may hold one
 * and is no active primary now has run out, then record when this change
 * saw those not recorded yet (the file's header says why that is enough).
 */
static void
wait_for_lapsed_leases(void)
{
	static SPIPlanPtr longest_plan = NULL;
	static const char *longest_sql =
		"SELECT c.longest FROM fencing.cluster_lease AS c "
		"WHERE c.longest OPERATOR(pg_catalog.>) '0'::pg_catalog.interval";
	static SPIPlanPtr until_plan = NULL;
	static const char *until_sql =
		"SELECT pg_catalog.max(COALESCE(l.lapsed_at, $2)) OPERATOR(pg_catalog.+) "
		"       ($1 OPERATOR(pg_catalog.*) 1.1::pg_catalog.float8) OPERATOR(pg_catalog.+) '1 s'::pg_catalog.interval, "
		"       pg_catalog.bool_or(l.lapsed_at IS NULL) "
		"  FROM fencing.cluster_lease_nodes AS l"
		" WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_node AS d"
		"                    WHERE d.nodename OPERATOR(pg_catalog.=) l.nodename"
		"                      AND d.nodeport OPERATOR(pg_catalog.=) l.nodeport"
		"                      AND d.isactive AND d.noderole OPERATOR(pg_catalog.=) 'primary')";
	static SPIPlanPtr lapse_plan = NULL;
	static const char *lapse_sql =
		"UPDATE fencing.cluster_lease_nodes AS l SET lapsed_at = $1"
		" WHERE l.lapsed_at IS NULL"
		"   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_node AS d"
		"                    WHERE d.nodename OPERATOR(pg_catalog.=) l.nodename"
		"                      AND d.nodeport OPERATOR(pg_catalog.=) l.nodeport"
		"                      AND d.isactive AND d.noderole OPERATOR(pg_catalog.=) 'primary')";
	Oid			argtypes[2] = {INTERVALOID, TIMESTAMPTZOID};
	Datum		values[2];
	bool		isnull;
	TimestampTz until = 0;
	TimestampTz observed = 0;
	bool		unrecorded = false;
	Oid			nsp;
	FencingUserContext uctx;

	/* the library newer than the SQL (before ALTER EXTENSION UPDATE): no lease */
	nsp = get_namespace_oid(FENCING_SCHEMA, true);
	if (!OidIsValid(nsp) || !OidIsValid(get_relname_relid("cluster_lease", nsp)))
		return;
	fencing_spi_connect_as_owner(&uctx);
	/* as committed (a fresh snapshot), whatever this transaction's isolation */
	(void) fencing_spi_execute(&longest_plan, longest_sql, 0, NULL, NULL, true);
	if (SPI_processed == 1 && citus_installed())
	{
		values[0] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
		{
			Oid			dist_node = get_relname_relid("pg_dist_node", PG_CATALOG_NAMESPACE);

			values[0] = SPI_datumTransfer(values[0], false, sizeof(Interval));
			/*
			 * Until this transaction ends, no node stops (or starts) being an
			 * active primary: one found active now is fed by it, or the
			 * change fails; the read below comes after the lock, and a node
			 * it finds no active primary was so before observed.
			 */
			if (OidIsValid(dist_node))
				LockRelationOid(dist_node, ShareLock);
			observed = GetCurrentTimestamp();
			values[1] = TimestampTzGetDatum(observed);

			/*
			 * The lapses recorded (committed: a fresh snapshot), and observed
			 * for a node whose lapse nobody recorded yet.  No row is locked
			 * across the wait: a renewal records lapses meanwhile (and
			 * commits them), so that a takeover cancelled during its wait
			 * does not leave the next try to start it over.
			 */
			(void) fencing_spi_execute(&until_plan, until_sql, 2, argtypes, values, true);
			if (SPI_processed == 1)
			{
				Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

				if (!isnull)
					until = DatumGetTimestampTz(d);
				d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
				unrecorded = !isnull && DatumGetBool(d);
			}
		}
	}
	fencing_spi_finish_as_owner(&uctx);

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		long		ms;

		if (until == 0 || now >= until)
			break;
		ms = Min(TimestampDifferenceMilliseconds(now, until), 1000L);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(ms, 1L), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}

	/*
	 * Waited out: the lapses this change observed are recorded (if it
	 * commits), so the next change does not wait for them again.
	 */
	if (unrecorded)
	{
		fencing_spi_connect_as_owner(&uctx);
		(void) fencing_spi_execute(&lapse_plan, lapse_sql, 1, &argtypes[1], &values[1], false);
		fencing_spi_finish_as_owner(&uctx);
	}
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
	/* a node cut off and disabled under a feed lease refuses writes first */
	wait_for_lapsed_leases();

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
