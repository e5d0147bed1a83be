/*-------------------------------------------------------------------------
 *
 * protect.c
 *	  fencing.protect() and fencing.unprotect(): install and remove the fence
 *	  triggers on a table, checking the table first.
 *
 * The row trigger is named so that it sorts after ordinary BEFORE triggers
 * (Postgres fires them in name order) and so sees the row as they left it.
 * On a partitioned table Postgres clones the row trigger to every partition,
 * also to partitions attached later; statement triggers are not cloned, so
 * the TRUNCATE trigger is installed on each existing partition as well.
 *
 * Each function checks that the caller owns the relation before it takes
 * any lock on it (as core DDL does): otherwise any role could hold a lock on
 * a table it cannot touch, a catalog even.  protect() with a fixed scope
 * also needs the "write" privilege on the scope (security/scope_acl.c).
 * The fence's DDL about a table (CREATE, DROP and ALTER of its triggers)
 * runs as the table's owner, never as the extension's owner or the caller:
 * DDL can run the table's own code (a partition key's expression, folded
 * while the relcache builds it), which must run with its writer's rights.
 * PUBLIC may not execute the fence function: the owner of a table this
 * fences gets EXECUTE (the one statement here run as the extension's
 * owner, on the extension's function only).
 *
 * Partitions created or attached later get the TRUNCATE trigger from the
 * event trigger, as the role whose command made them, and only those the
 * command made: a restore recreates each partition's own trigger itself.
 *
 * Every fence trigger fires ALWAYS, also under session_replication_role =
 * replica: there the fence itself decides who may write unchecked
 * (fence_trigger.c), not whoever may set the role.
 *
 * On Citus every shard placement of a protected table carries the same
 * fence triggers as the table, firing ALWAYS, whichever came first,
 * protect() or distributing the table (enable_always_on_shards(),
 * protect_citus_shard()); a Citus-local table's shard has no TRUNCATE
 * trigger of its own (Citus drops it), and the table's reads it.
 *
 * A shard table Citus creates for a shard move, copy or split is never
 * without a fence while its table is protected: Citus creates it in a
 * transaction of its own and gives it the table's triggers only after it
 * copied the rows, so the event trigger that follows its CREATE TABLE gives
 * it at once interim fence triggers, copies of its table's, internal
 * (tgisinternal: no SQL command makes one), firing ALWAYS
 * (fence_new_citus_placement()); a WHEN condition other than the
 * fencing.raise_pending() protect() writes is refused, not copied (it would
 * run the owner's code as the role running the shard operation).  They
 * judge every write as the fence does, but let Citus's own copy of the
 * rows in (fence_trigger.c); once Citus has given the shard its own fence
 * triggers, firing ALWAYS, the event trigger after that ALTER TABLE drops
 * them (retire_interim_fences()).
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/objectaddress.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "tcop/deparse_utility.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "base/input_checks.h"
#include "security/scope_acl.h"
#include "state/citus_shards.h"
#include "state/extension_state.h"
#include "trigger/fence_config.h"
#include "trigger/restored_fence.h"

#define ROW_TRIGGER_NAME		"zz_fence_row"
#define TRUNCATE_TRIGGER_NAME	"zz_fence_truncate"
#define INSERTED_TRIGGER_NAME	"zz_fence_inserted"

/* The caller must own the relation: checked on the catalog, without a lock. */
static void
require_table_owner(Oid relid)
{
	bool		owner;

	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
#if PG_VERSION_NUM >= 160000
	owner = object_ownercheck(RelationRelationId, relid, GetUserId());
#else
	owner = pg_class_ownercheck(relid, GetUserId());
#endif
	if (!owner)
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(get_rel_relkind(relid)),
					   get_rel_name(relid));
}

static void
run_ddl(const char *sql)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "\"%s\" failed: %s", sql, SPI_result_code_string(rc));
}

static char *
qualified_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/* OID of fencing.fence_trigger(). */
static Oid
fence_trigger_oid(void)
{
	return DatumGetObjectId(DirectFunctionCall1(regprocedurein,
												CStringGetDatum("fencing.fence_trigger()")));
}

/*
 * PUBLIC may not execute the fence (a trigger made by hand on a table one
 * does not own cannot be made at all; on one's own table it could bind it
 * to any scope with any configuration): the owner of a table protect()
 * fences gets EXECUTE, so that the fence's DDL can run as that owner.  It
 * lets the owner do by hand no more than protect() would: the fence checks
 * the table owner's right to the scope at every write, whoever made the
 * trigger (fence_config.c).  The GRANT runs as the extension's owner and
 * touches only the extension's function.  Superusers need none.
 */
static void
allow_fence_for(Oid role)
{
	FencingUserContext uctx;
	Oid			fence = fence_trigger_oid();

	if (superuser_arg(role) || pg_proc_aclcheck(fence, role, ACL_EXECUTE) == ACLCHECK_OK)
		return;
	/*
	 * One grant at a time: a GRANT updates the function's catalog row, and
	 * a second one in a concurrent transaction fails on it ("tuple
	 * concurrently updated").  The second waits for the first to end, then
	 * sees its grant (the lock takes in the messages of what committed),
	 * and grants from there.  Only a role's first grant comes here.
	 */
	LockDatabaseObject(ProcedureRelationId, fence, 0, ShareUpdateExclusiveLock);
	if (pg_proc_aclcheck(fence, role, ACL_EXECUTE) == ACLCHECK_OK)
		return;
	fencing_become_owner(&uctx);
	run_ddl(psprintf("GRANT EXECUTE ON FUNCTION fencing.fence_trigger() TO %s",
					 quote_identifier(GetUserNameFromId(role, false))));
	fencing_restore_user(&uctx);
}

/*
 * The fence's DDL on a relation (CREATE, DROP, ALTER ... TRIGGER) runs as
 * the relation's owner, after the caller's right to it was checked
 * (require_table_owner(), require_trigger_right()), never as the
 * extension's owner or the caller: DDL about a relation can evaluate the
 * relation's own code (CREATE TRIGGER on a partitioned table recurses into
 * the partitions and builds the partition key, folding its expression,
 * which may call the owner's functions), and that code must run with the
 * rights of the role that wrote it, as in Postgres's maintenance commands
 * (a security-restricted operation: extension_state.c).
 */
static void
run_ddl_as_relation_owner(Oid relid, const char *sql)
{
	FencingUserContext uctx;

	fencing_become_relation_owner(relid, &uctx);
	run_ddl(sql);
	fencing_restore_user(&uctx);
}

/* The same for DDL that names the fence: its owner may execute it. */
static void
run_fence_ddl(Oid relid, const char *sql)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	allow_fence_for(((Form_pg_class) GETSTRUCT(tup))->relowner);
	ReleaseSysCache(tup);
	run_ddl_as_relation_owner(relid, sql);
}

/*
 * On a Citus cluster each node creates the fence triggers of the shards it
 * holds as the table's owner (create_distributed_table(), shard moves,
 * copies to a new node), so that role needs EXECUTE on the fence on every
 * node, and Citus does not carry a GRANT on an extension's function to the
 * other nodes: protect() grants it on each (as the extension's owner, which
 * Citus connects as).  Like the partitions' grant below, it lets the owner
 * do by hand no more than protect() would.
 */
static void
grant_fence_on_every_node(Oid owner)
{
	static const char *sql =
		"SELECT pg_catalog.string_agg(pg_catalog.format('node %s: %s', nodeid, result), '; ') "
		"FROM pg_catalog.run_command_on_all_nodes($1) WHERE NOT success";
	char	   *grant = psprintf("GRANT EXECUTE ON FUNCTION fencing.fence_trigger() TO %s",
								 quote_identifier(GetUserNameFromId(owner, false)));
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(grant)};
	FencingUserContext uctx;
	bool		isnull = true;
	Datum		failed = (Datum) 0;

	fencing_become_owner(&uctx);
	if (SPI_execute_with_args(sql, 1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not run \"%s\" on the nodes of the Citus cluster", grant);
	if (SPI_processed == 1)
		failed = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	fencing_restore_user(&uctx);
	if (!isnull)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not grant EXECUTE on fencing.fence_trigger() to role \"%s\" on every node of the Citus cluster",
						GetUserNameFromId(owner, false)),
				 errdetail("%s", TextDatumGetCString(failed)),
				 errhint("Each node creates the fence triggers of its shards as the table's owner. "
						 "Run protect() again once every node is reachable.")));
}

/*
 * The caller may put triggers on a relation below the one it owns (a
 * partition another role owns): what CREATE TRIGGER as the caller checked.
 */
static void
require_trigger_right(Oid relid)
{
	if (pg_class_aclcheck(relid, GetUserId(), ACL_TRIGGER) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(get_rel_relkind(relid)),
					   get_rel_name(relid));
}

/* A scan of pg_trigger for a relation's trigger of this name. */
static SysScanDesc
trigger_named(Relation tgrel, Oid relid, const char *tgname)
{
	ScanKeyData keys[2];

	ScanKeyInit(&keys[0], Anum_pg_trigger_tgrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(relid));
	ScanKeyInit(&keys[1], Anum_pg_trigger_tgname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum(tgname));
	return systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 2, keys);
}

/*
 * A fence trigger of a relation fires ALWAYS: what ALTER TABLE ... ENABLE
 * ALWAYS TRIGGER does to pg_trigger, without its ownership check (the
 * caller's right to put the trigger there was checked) and without firing
 * event triggers.  The relation is locked as CREATE TRIGGER locked it.  No
 * such trigger: nothing to do.
 */
static void
fire_always(Oid relid, const char *tgname)
{
	Relation	tgrel;
	SysScanDesc scan;
	HeapTuple	tuple;

	CommandCounterIncrement();	/* see the trigger just created */
	tgrel = table_open(TriggerRelationId, RowExclusiveLock);
	scan = trigger_named(tgrel, relid, tgname);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple) &&
		((Form_pg_trigger) GETSTRUCT(tuple))->tgenabled != TRIGGER_FIRES_ALWAYS)
	{
		HeapTuple	copy = heap_copytuple(tuple);
		Form_pg_trigger form = (Form_pg_trigger) GETSTRUCT(copy);

		form->tgenabled = TRIGGER_FIRES_ALWAYS;
		CatalogTupleUpdate(tgrel, &copy->t_self, copy);
		InvokeObjectPostAlterHook(TriggerRelationId, form->oid, 0);
		heap_freetuple(copy);
		/* pg_trigger has no syscache: the relcache entry must be rebuilt */
		CacheInvalidateRelcacheByRelid(relid);
	}
	systable_endscan(scan);
	table_close(tgrel, RowExclusiveLock);
	CommandCounterIncrement();
}

/*
 * The TRUNCATE trigger takes no arguments: it judges by the row trigger of
 * its table (fence_trigger.c), and every statement on the table copies
 * each of its triggers with their arguments, so arguments here would cost
 * every write and decide nothing.  (Tables protected before 1.4 keep the
 * arguments they had: they are checked, and ignored, the same way.)
 * Partitions' row triggers are clones: they go with the parent's.
 */
static void
create_named_truncate_trigger(Oid relid, const char *tgname)
{
	require_trigger_right(relid);
	run_fence_ddl(relid, psprintf("CREATE TRIGGER %s BEFORE TRUNCATE ON %s "
							  "FOR EACH STATEMENT EXECUTE FUNCTION fencing.fence_trigger()",
							  quote_identifier(tgname), qualified_name(relid)));
	fire_always(relid, tgname);
}

static void
create_truncate_trigger(Oid relid)
{
	create_named_truncate_trigger(relid, TRUNCATE_TRIGGER_NAME);
}

/* Whether the relation has a trigger of this name that calls the fence. */
static bool
has_fence_trigger(Oid relid, const char *tgname)
{
	Relation	tgrel;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		ours;

	tgrel = table_open(TriggerRelationId, AccessShareLock);
	scan = trigger_named(tgrel, relid, tgname);
	tuple = systable_getnext(scan);
	ours = HeapTupleIsValid(tuple) &&
		((Form_pg_trigger) GETSTRUCT(tuple))->tgfoid == fence_trigger_oid();
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);
	return ours;
}

/*
 * The fence's triggers of a relation, and only those (a trigger of the same
 * name calling another function is the owner's own), dropped as its owner.
 *
 * For a partition (row_trigger false, after the table above it lost its row
 * fence and with it the clones): its TRUNCATE fence only when no row fence
 * is left on it.  One that is left is the partition's own (protect() of the
 * partition, or of a table between the two): the TRUNCATE fence is part of
 * that protection, not of the one being removed.  Dropping it would leave
 * the partition protected but open to TRUNCATE, and, run as the partition's
 * owner, would let a caller holding only TRIGGER on another role's partition
 * drop that role's trigger (DROP TRIGGER wants the owner).
 */
static void
drop_fence_triggers(Oid relid, bool row_trigger)
{
	const char *names[] = {ROW_TRIGGER_NAME, INSERTED_TRIGGER_NAME, TRUNCATE_TRIGGER_NAME};
	char	   *name = qualified_name(relid);

	if (!row_trigger && has_fence_trigger(relid, ROW_TRIGGER_NAME))
		return;
	for (int i = row_trigger ? 0 : 2; i < (int) lengthof(names); i++)
	{
		if (has_fence_trigger(relid, names[i]))
			run_ddl_as_relation_owner(relid, psprintf("DROP TRIGGER %s ON %s",
													  names[i], name));
	}
}

/* Every partition below a partitioned table, at any depth, without it. */
static List *
partitions_of(Relation rel)
{
	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		return NIL;
	return list_delete_first(find_all_inheritors(RelationGetRelid(rel),
												 ShareRowExclusiveLock, NULL));
}

/*
 * A Citus table's shards are tables of their own, on the workers (and on
 * the coordinator: a reference table's placement, a Citus-local table's
 * shard).  Citus copies every trigger of the table, and whether it fires
 * ALWAYS, onto a shard it creates (create_distributed_table() after
 * protect(), shard moves, splits): nothing to do then.  Onto existing
 * shards Citus propagates CREATE TRIGGER for row triggers but not for
 * TRUNCATE triggers ("no truncate triggers on shard relations"), and not
 * our catalog update of fire_always().  So for a table distributed before
 * protect(): ALTER TABLE ... ENABLE ALWAYS TRIGGER, which Citus propagates
 * to every placement in the same distributed transaction; on each node the
 * event trigger that follows it (fencing_new_partitions) gives the shard
 * its TRUNCATE trigger (protect_citus_shard()).
 */
static void
enable_always_on_shards(Oid relid)
{
	const char *names[] = {ROW_TRIGGER_NAME, INSERTED_TRIGGER_NAME};

	for (int i = 0; i < (int) lengthof(names); i++)
	{
		if (OidIsValid(get_trigger_oid(relid, names[i], true)))
			run_ddl_as_relation_owner(relid, psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s",
									  qualified_name(relid), names[i]));
	}
}

FENCING_FUNCTION(fencing_protect);

/*
 * fencing.protect(relation regclass, token_column name, scope text,
 *                 scope_column name, on_stale text, tokens text)
 */
Datum
fencing_protect(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *args[5];
	int			nargs;
	Relation	rel;
	FenceConfig cfg;
	char	   *arglist;
	List	   *partitions;
	ListCell   *lc;
	Oid			owner;
	bool		citus_table;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation and token column must not be null")));
	if (!PG_ARGISNULL(2) && !PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a protected table has either a fixed scope or a scope column, not both")));

	relid = PG_GETARG_OID(0);
	args[0] = NameStr(*PG_GETARG_NAME(1));
	args[1] = PG_ARGISNULL(4) ? "error" : text_to_cstring(PG_GETARG_TEXT_PP(4));
	if (!PG_ARGISNULL(2))
	{
		args[2] = "scope";
		args[3] = text_to_cstring(PG_GETARG_TEXT_PP(2));
		nargs = 4;
	}
	else if (!PG_ARGISNULL(3))
	{
		args[2] = "column";
		args[3] = NameStr(*PG_GETARG_NAME(3));
		nargs = 4;
	}
	else
	{
		args[2] = "row";
		nargs = 3;
	}
	/* the token source is written out only when it is not the default */
	if (PG_NARGS() > 5 && !PG_ARGISNULL(5) &&
		parse_token_source(text_to_cstring(PG_GETARG_TEXT_PP(5))) == FENCE_TOKENS_DECLARED)
		args[nargs++] = "tokens=declared";

	require_table_owner(relid);
	if (!PG_ARGISNULL(2))
	{
		ScopeInfo	info;

		fencing_check_scope_name(args[3]);
		/* binding a table to a scope is writing to it; not created here */
		scope_acl_require(args[3], SCOPE_PRIV_WRITE, GetUserId(),
						  SCOPE_MISSING_MAY_CREATE, &info);
	}

	rel = table_open(relid, ShareRowExclusiveLock);
	if (rel->rd_rel->relkind != RELKIND_RELATION &&
		rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot protect \"%s\"", RelationGetRelationName(rel)),
				 errdetail("Only tables and partitioned tables can be protected.")));
	/* its functions write the extension's own tables, with no token */
	if (RelationGetNamespace(rel) == get_namespace_oid(FENCING_SCHEMA, false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot protect \"%s\"", RelationGetRelationName(rel)),
				 errdetail("Relation \"%s.%s\" belongs to the extension fencing, whose functions write it.",
						   FENCING_SCHEMA, RelationGetRelationName(rel))));
	fence_config_resolve(rel, nargs, args, &cfg);
	partitions = partitions_of(rel);
	foreach(lc, partitions)
	{
		Relation	part = table_open(lfirst_oid(lc), NoLock);

		/* the row trigger is cloned onto every partition: the caller's right too */
		require_trigger_right(lfirst_oid(lc));
		fence_config_resolve(part, nargs, args, &cfg);
		table_close(part, NoLock);
	}
	owner = rel->rd_rel->relowner;
	table_close(rel, NoLock);
	citus_table = citus_is_citus_table(relid);
	/*
	 * A worker's own table by scope: the coordinator's changes of marks reach
	 * a worker only while Citus counts it, and what a worker cut off and
	 * disabled admits into Citus's placements Citus replaces when it
	 * activates the node; a table of its own would keep it.
	 */
	if (strcmp(args[2], "row") != 0 && !citus_table && citus_node_is_worker())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot protect \"%s\" by scope on a Citus worker: it is not a Citus table",
						get_rel_name(relid)),
				 errdetail("Relation \"%s\" would be fenced by %s \"%s\" on this worker. The coordinator's changes of marks reach this node only while Citus counts it: a worker cut off from the coordinator and disabled cannot tell that its marks are old, and rows written to its own tables at a fenced term would stay.",
						   get_rel_name(relid), strcmp(args[2], "scope") == 0 ? "scope" : "scope column",
						   args[3]),
				 errhint("Protect it per row, or make it a Citus table from the coordinator (create_reference_table(), create_distributed_table()) and protect it there.")));

	/* one argument for the list (fence_config.h) */
	arglist = quote_literal_cstr(fence_config_pack(nargs, args));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/*
	 * On Citus, every node's grant first, each in a transaction of its own
	 * (the coordinator's through a connection of its own too): after a
	 * GRANT of ours in this transaction, that connection would wait for
	 * this one forever.  Then this backend sees it (allow_fence_for()).
	 */
	if (!superuser_arg(owner) && OidIsValid(get_extension_oid("citus", true)))
	{
		grant_fence_on_every_node(owner);
		AcceptInvalidationMessages();
	}
	drop_fence_triggers(relid, true);
	foreach(lc, partitions)
		drop_fence_triggers(lfirst_oid(lc), false);
	run_fence_ddl(relid, psprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OR DELETE ON %s "
							  "FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger(%s)",
							  ROW_TRIGGER_NAME, qualified_name(relid), arglist));
	/*
	 * Raises deferred by INSERT ... ON CONFLICT (see fence_trigger.c).  No
	 * arguments: it judges by the row trigger's (every UPDATE statement
	 * copies each trigger of its table, arguments included).  Its WHEN
	 * function exists from 1.2 on (this library also serves older SQL
	 * versions of the extension until ALTER EXTENSION UPDATE).
	 */
	if (cfg.scope_kind != FENCE_SCOPE_NONE &&
		OidIsValid(LookupFuncName(list_make2(makeString(FENCING_SCHEMA),
											 makeString("raise_pending")),
								  0, NULL, true)))
		run_fence_ddl(relid, psprintf("CREATE TRIGGER %s AFTER INSERT ON %s FOR EACH ROW "
								  "WHEN (fencing.raise_pending()) "
								  "EXECUTE FUNCTION fencing.fence_trigger()",
								  INSERTED_TRIGGER_NAME, qualified_name(relid)));
	/* the partitions' clones too (a partition attached later copies the parent's) */
	fire_always(relid, ROW_TRIGGER_NAME);
	fire_always(relid, INSERTED_TRIGGER_NAME);
	foreach(lc, partitions)
	{
		fire_always(lfirst_oid(lc), ROW_TRIGGER_NAME);
		fire_always(lfirst_oid(lc), INSERTED_TRIGGER_NAME);
	}
	create_truncate_trigger(relid);
	foreach(lc, partitions)
		create_truncate_trigger(lfirst_oid(lc));
	if (citus_table)
		enable_always_on_shards(relid);

	/*
	 * Postgres copies the row trigger onto a partition created or attached
	 * later with the rights of the role doing it, EXECUTE on the fence
	 * included: the owner of the table got it above (allow_fence_for()).
	 */
	SPI_finish();

	PG_RETURN_VOID();
}

FENCING_FUNCTION(fencing_unprotect);

/* fencing.unprotect(relation regclass) */
Datum
fencing_unprotect(PG_FUNCTION_ARGS)
{
	Oid			relid;
	Relation	rel;
	List	   *partitions;
	ListCell   *lc;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	require_table_owner(relid);
	rel = table_open(relid, ShareRowExclusiveLock);
	partitions = partitions_of(rel);
	table_close(rel, NoLock);
	/* a partition's own TRUNCATE fence is dropped too: the caller's right there */
	foreach(lc, partitions)
		require_trigger_right(lfirst_oid(lc));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	drop_fence_triggers(relid, true);
	foreach(lc, partitions)
		drop_fence_triggers(lfirst_oid(lc), false);
	SPI_finish();

	PG_RETURN_VOID();
}

/* Our TRUNCATE trigger on a relation, if it has one. */
static const Trigger *
truncate_trigger_of(Relation rel)
{
	if (rel->trigdesc == NULL)
		return NULL;
	for (int i = 0; i < rel->trigdesc->numtriggers; i++)
	{
		const Trigger *t = &rel->trigdesc->triggers[i];

		if (strcmp(t->tgname, TRUNCATE_TRIGGER_NAME) == 0 &&
			strcmp(get_func_name(t->tgfoid), "fence_trigger") == 0 &&
			strcmp(get_namespace_name(get_func_namespace(t->tgfoid)), FENCING_SCHEMA) == 0)
			return t;
	}
	return NULL;
}

/*
 * Every fence trigger of a relation must still suit it: after ALTER TABLE
 * (a DEFAULT on the token column, a changed scope column type) the error
 * comes at once, from the event trigger, not at the next write.
 */
static void
check_fence_triggers(Relation rel)
{
	Oid			fence_fn = fence_trigger_oid();

	for (int i = 0; rel->trigdesc != NULL && i < rel->trigdesc->numtriggers; i++)
	{
		const Trigger *t = &rel->trigdesc->triggers[i];
		FenceConfig cfg;

		/*
		 * The AFTER INSERT trigger and, since 1.4, the TRUNCATE trigger have
		 * no arguments: they judge by the row trigger's.
		 */
		if (t->tgfoid == fence_fn && TRIGGER_FOR_BEFORE(t->tgtype) &&
			(TRIGGER_FOR_ROW(t->tgtype) || t->tgnargs > 0))
			fence_config_resolve(rel, t->tgnargs, t->tgargs, &cfg);
	}
}

/*
 * A Citus shard that existed before this transaction, of a table protected
 * after it was distributed, and lacking its TRUNCATE trigger: given one,
 * named as Citus names a shard's trigger (<name>_<shard id>), with the
 * arguments of the shard's row trigger.  A shard created in this
 * transaction, or one the metadata does not place on this node yet (the
 * target of a shard move, created and equipped in transactions of their
 * own before its placement moves), is Citus's to equip (it copies every
 * trigger of its table);
 * a Citus-local table's shard never has one (Citus drops it: the table's
 * own TRUNCATE trigger fires for its shard).  Returns 1 if it added one.
 */
static int
protect_citus_shard(Relation rel)
{
	Oid			fence_fn = fence_trigger_oid();
	Oid			table = citus_shard_table(rel);
	const Trigger *row_trigger = NULL;
	const char *suffix;
	FenceConfig cfg;

	if (!OidIsValid(table) ||
		rel->rd_createSubid != InvalidSubTransactionId ||
		!citus_shard_placed_here(rel) ||
		citus_is_local_table(table))
		return 0;
	for (int i = 0; rel->trigdesc != NULL && i < rel->trigdesc->numtriggers; i++)
	{
		const Trigger *t = &rel->trigdesc->triggers[i];

		if (t->tgfoid != fence_fn || !TRIGGER_FOR_BEFORE(t->tgtype))
			continue;
		if (TRIGGER_FOR_TRUNCATE(t->tgtype))
			return 0;			/* it has one */
		if (TRIGGER_FOR_ROW(t->tgtype))
			row_trigger = t;
	}
	if (row_trigger == NULL)
		return 0;
	fence_config_resolve(rel, row_trigger->tgnargs, row_trigger->tgargs, &cfg);
	suffix = strrchr(RelationGetRelationName(rel), '_');
	Assert(suffix != NULL);		/* citus_shard_table() found "_<shard id>" */
	create_named_truncate_trigger(RelationGetRelid(rel),
								  psprintf("%s%s", TRUNCATE_TRIGGER_NAME, suffix));
	CommandCounterIncrement();
	return 1;
}

FENCING_FUNCTION(fencing_protect_new_partitions);

/*
 * fencing.protect_new_partitions(relation regclass), of the SQL of 1.4 (the
 * event trigger of 1.5 is fencing_fence_new_partitions()): partitions created or
 * attached below a protected partitioned table get the TRUNCATE trigger
 * (when a table above them has one), and every fence trigger in the tree
 * is checked against its table.
 */
Datum
fencing_protect_new_partitions(PG_FUNCTION_ARGS)
{
	List	   *tree;
	ListCell   *lc;
	int			added = 0;

	/*
	 * The SQL of 1.4 calls this from its SECURITY DEFINER event trigger, as
	 * the extension's owner: the role whose DDL fired it must own the tree
	 * (or nothing is locked nor done; ALTER EXTENSION fencing UPDATE gives
	 * the event trigger of 1.5, which acts on the command's own tables).
	 */
	if (!SearchSysCacheExists1(RELOID, PG_GETARG_DATUM(0)))
		PG_RETURN_INT32(0);
#if PG_VERSION_NUM >= 160000
	if (!object_ownercheck(RelationRelationId, PG_GETARG_OID(0), GetOuterUserId()))
#else
	if (!pg_class_ownercheck(PG_GETARG_OID(0), GetOuterUserId()))
#endif
		PG_RETURN_INT32(0);
	require_table_owner(PG_GETARG_OID(0));
	/* find_all_inheritors() locks the children only: the root first */
	LockRelationOid(PG_GETARG_OID(0), ShareRowExclusiveLock);
	tree = find_all_inheritors(PG_GETARG_OID(0), ShareRowExclusiveLock, NULL);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	foreach(lc, tree)
	{
		Relation	rel = table_open(lfirst_oid(lc), NoLock);
		const Trigger *trigger = truncate_trigger_of(rel);
		ListCell   *plc;

		check_fence_triggers(rel);
		if (unlikely(OidIsValid(citus_shard_table(rel))))
			added += protect_citus_shard(rel);

		if (trigger != NULL)
		{
			foreach(plc, partitions_of(rel))
			{
				Oid			part = lfirst_oid(plc);

				if (!OidIsValid(get_trigger_oid(part, TRUNCATE_TRIGGER_NAME, true)))
				{
					Relation	prel = table_open(part, NoLock);

					/* the partition must suit its fence (the row trigger's clone) */
					check_fence_triggers(prel);
					table_close(prel, NoLock);
					create_truncate_trigger(part);
					CommandCounterIncrement();
					added++;
				}
			}
		}
		table_close(rel, NoLock);
	}
	SPI_finish();
	PG_RETURN_INT32(added);
}

/*
 * The partitions a DDL command created or attached: CREATE TABLE ...
 * PARTITION OF, and each ALTER TABLE ... ATTACH PARTITION of the command.
 */
static List *
partitions_added_by(Oid parent, const CollectedCommand *cmd)
{
	List	   *added = NIL;
	ListCell   *lc;

	if (cmd->type == SCT_Simple && cmd->parsetree != NULL &&
		IsA(cmd->parsetree, CreateStmt) &&
		((CreateStmt *) cmd->parsetree)->partbound != NULL &&
		cmd->d.simple.address.classId == RelationRelationId)
		return list_make1_oid(cmd->d.simple.address.objectId);
	if (cmd->type != SCT_AlterTable)
		return NIL;
	foreach(lc, cmd->d.alterTable.subcmds)
	{
		CollectedATSubcmd *sub = (CollectedATSubcmd *) lfirst(lc);

		AlterTableCmd *atc = (AlterTableCmd *) sub->parsetree;
		Oid			part;

		if (atc == NULL || !IsA(atc, AlterTableCmd) || atc->subtype != AT_AttachPartition)
			continue;
		/*
		 * Servers before 18 collect the subcommand without the partition's
		 * address: its name then, resolved as the command resolved it (the
		 * event trigger keeps the caller's search_path), and taken only if
		 * it is a partition of the table now.
		 */
		if (sub->address.classId == RelationRelationId && OidIsValid(sub->address.objectId))
			part = sub->address.objectId;
		else
			part = RangeVarGetRelid(((PartitionCmd *) atc->def)->name, NoLock, true);
		if (OidIsValid(part) && get_partition_parent(part, true) == parent)
			added = lappend_oid(added, part);
	}
	return added;
}

/*
 * Whether the command is an ALTER TABLE ... OWNER TO (only then is a grant
 * due: a restore's ALTER TABLE ... ENABLE ALWAYS TRIGGER in parallel jobs
 * must not grant, the dump carries the grants).
 */
static bool
changes_owner(const CollectedCommand *cmd)
{
	ListCell   *lc;

	if (cmd->type != SCT_AlterTable)
		return false;
	foreach(lc, cmd->d.alterTable.subcmds)
	{
		AlterTableCmd *atc = (AlterTableCmd *) ((CollectedATSubcmd *) lfirst(lc))->parsetree;

		if (atc != NULL && IsA(atc, AlterTableCmd) && atc->subtype == AT_ChangeOwner)
			return true;
	}
	return false;
}

/* Whether this backend holds a lock of any mode on the relation. */
static bool
locked_by_me(Oid relid)
{
	LOCKTAG		tag;

	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	return FENCING_LOCK_HELD_ANY(&tag);
}

/* Whether a trigger is an interim fence (fence_new_citus_placement()). */
static inline bool
interim_fence(const Trigger *t, Oid fence_fn)
{
	return t->tgfoid == fence_fn && t->tgisinternal;
}

/* Whether a trigger's WHEN is the one protect() writes: fencing.raise_pending(). */
static bool
is_raise_pending_call(const Node *when)
{
	Oid			raise_pending = LookupFuncName(list_make2(makeString(FENCING_SCHEMA),
														  makeString("raise_pending")),
											   0, NULL, true);

	return OidIsValid(raise_pending) && IsA(when, FuncExpr) &&
		((const FuncExpr *) when)->funcid == raise_pending &&
		((const FuncExpr *) when)->args == NIL;
}

/*
 * An interim copy on rel of its Citus table's fence trigger t: the same
 * function, arguments, timing, events and WHEN condition, firing ALWAYS,
 * internal.  Postgres names it "<name>_<its OID>".  Created as rel's owner.
 *
 * The only WHEN copied is the one protect() writes (a call of
 * fencing.raise_pending(), C, which reads no column).  An interim fence
 * fires while Citus copies the rows into the new shard, as the role running
 * the shard move or split (a superuser, or the subscription's owner of a
 * logical replication apply), where Citus fires none of the table's own
 * triggers: a condition the table's owner wrote on a fence trigger made by
 * hand (its owner may execute the fence) would run the owner's functions
 * with that role's rights.  Such a trigger is refused, as one on the
 * table's columns (which would not fit the shard's numbers) is.
 */
static void
create_interim_fence(Relation rel, const Trigger *t)
{
	CreateTrigStmt *stmt = makeNode(CreateTrigStmt);
	Node	   *when = NULL;
	FencingUserContext uctx;

	if (t->tgqual != NULL)
	{
		when = stringToNode(t->tgqual);
		if (!is_raise_pending_call(when))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot fence new shard \"%s\" of protected relation",
							RelationGetRelationName(rel)),
					 errdetail("Its table's fence trigger \"%s\" has a WHEN condition other than fencing.raise_pending(): the fence of a new shard runs no condition of the table's owner.",
							   t->tgname),
					 errhint("Drop trigger \"%s\" (fencing.protect() makes the table's fence triggers), or run fencing.protect() on the table again.",
							 t->tgname)));
	}
	stmt->trigname = TRIGGER_FOR_TRUNCATE(t->tgtype) ? TRUNCATE_TRIGGER_NAME "_interim" :
		TRIGGER_FOR_BEFORE(t->tgtype) ? ROW_TRIGGER_NAME "_interim" :
		INSERTED_TRIGGER_NAME "_interim";
	stmt->relation = makeRangeVar(get_namespace_name(RelationGetNamespace(rel)),
								  pstrdup(RelationGetRelationName(rel)), -1);
	stmt->funcname = list_make2(makeString(FENCING_SCHEMA), makeString("fence_trigger"));
	for (int i = 0; i < t->tgnargs; i++)
		stmt->args = lappend(stmt->args, makeString(pstrdup(t->tgargs[i])));
	stmt->row = TRIGGER_FOR_ROW(t->tgtype);
	stmt->timing = t->tgtype & TRIGGER_TYPE_TIMING_MASK;
	stmt->events = t->tgtype & TRIGGER_TYPE_EVENT_MASK;

	fencing_become_relation_owner(RelationGetRelid(rel), &uctx);
	(void) CreateTriggerFiringOn(stmt, NULL, RelationGetRelid(rel), InvalidOid,
								 InvalidOid, InvalidOid, t->tgfoid, InvalidOid, when,
								 true, false, TRIGGER_FIRES_ALWAYS);
	fencing_restore_user(&uctx);
}

/*
 * A table that CREATE TABLE has just made, named as Citus names a shard of
 * a Citus table of its schema (state/citus_shards.c), when that table is
 * fenced and the new one is not: the new placement of a shard move or
 * copy, a split's child (or a dummy table the split makes for logical
 * replication), or a shard create_distributed_table() makes (which Citus
 * equips in the same transaction).  It gets an interim copy of each of its
 * table's fence triggers, in the transaction that created it: no other
 * transaction ever sees it unfenced.  Returns how many.
 */
static int
fence_new_citus_placement(Relation rel)
{
	Oid			fence_fn = fence_trigger_oid();
	Oid			table;
	Relation	shell;
	int			added = 0;

	if (rel->rd_rel->relkind != RELKIND_RELATION)
		return 0;
	for (int i = 0; rel->trigdesc != NULL && i < rel->trigdesc->numtriggers; i++)
	{
		if (rel->trigdesc->triggers[i].tgfoid == fence_fn)
			return 0;			/* fenced already */
	}
	table = citus_new_shard_table(rel);
	/*
	 * Citus creates a shard as its table's owner: a table anyone else
	 * creates is no placement of it (and no lock is taken on a table the
	 * creator has no rights to)
	 */
	if (!OidIsValid(table) ||
		!has_privs_of_role(GetUserId(), fencing_relation_owner(table)))
		return 0;
	shell = table_open(table, AccessShareLock);
	for (int i = 0; shell->trigdesc != NULL && i < shell->trigdesc->numtriggers; i++)
	{
		const Trigger *t = &shell->trigdesc->triggers[i];

		if (t->tgfoid != fence_fn || t->tgisinternal)
			continue;
		create_interim_fence(rel, t);
		added++;
	}
	table_close(shell, AccessShareLock);
	if (added > 0)
		CommandCounterIncrement();
	return added;
}

/*
 * Once a shard with interim fences carries Citus's own fence triggers, one
 * of the same kind (timing, events, per row or statement) for each interim
 * one, every one firing ALWAYS (Citus's ALTER TABLE ... ENABLE ALWAYS
 * TRIGGER after each CREATE TRIGGER, in one transaction), the interim
 * fences are dropped.  Until then both fire: the write must pass both.
 */
static void
retire_interim_fences(Relation rel)
{
	Oid			fence_fn = fence_trigger_oid();
	TriggerDesc *trigdesc = rel->trigdesc;
	List	   *interim = NIL;
	ListCell   *lc;

	for (int i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
	{
		const Trigger *t = &trigdesc->triggers[i];
		bool		matched = false;

		if (!interim_fence(t, fence_fn))
			continue;
		for (int j = 0; !matched && j < trigdesc->numtriggers; j++)
		{
			const Trigger *u = &trigdesc->triggers[j];

			matched = u->tgfoid == fence_fn && !u->tgisinternal &&
				u->tgtype == t->tgtype && u->tgenabled == TRIGGER_FIRES_ALWAYS;
		}
		if (!matched)
			return;
		interim = lappend_oid(interim, t->tgoid);
	}
	foreach(lc, interim)
	{
		ObjectAddress trigger;

		ObjectAddressSet(trigger, TriggerRelationId, lfirst_oid(lc));
		performDeletion(&trigger, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
	}
	if (interim != NIL)
		CommandCounterIncrement();
}

/* Whether the command is the CREATE TABLE that made relid. */
static bool
creates_table(Oid relid, const CollectedCommand *cmd)
{
	return cmd->type == SCT_Simple && cmd->parsetree != NULL &&
		IsA(cmd->parsetree, CreateStmt) &&
		cmd->d.simple.address.classId == RelationRelationId &&
		cmd->d.simple.address.objectId == relid;
}

/*
 * One DDL command about one table, as the role that ran it:
 *   - the fence triggers of the table, and of the tables below it that the
 *     command locked (changed), are checked against their tables (an ALTER
 *     TABLE that breaks a fence, a DEFAULT on a token column, fails at
 *     once); a table below that the command did not touch is left alone,
 *     unlocked (it may be another role's);
 *   - a partition this very command created or attached below a table with
 *     the TRUNCATE fence gets it, and so does every table below it.  Only
 *     those: a restore (pg_restore, psql with a plain dump, pg_upgrade)
 *     recreates each partition's own trigger after its parent's, and an
 *     ALTER TABLE of the parent in between (ENABLE ALWAYS TRIGGER) must not
 *     create it first;
 *   - a fenced table's owner may execute the fence (after ALTER TABLE ...
 *     OWNER TO, so that it can add partitions);
 *   - on Citus, a shard of a table protected after distribution gets its
 *     TRUNCATE fence (protect_citus_shard()); a shard table Citus has just
 *     created for a protected table gets interim fences
 *     (fence_new_citus_placement()), dropped once Citus has given it its
 *     own (retire_interim_fences()).
 */
static int
protect_ddl_command(Oid relid, const CollectedCommand *cmd, bool citus)
{
	List	   *added_parts;
	ListCell   *lc;
	int			added = 0;

	/* the command ran as the table's owner (or a superuser), and locked it */
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)) || !locked_by_me(relid))
		return 0;
	require_table_owner(relid);
	added_parts = partitions_added_by(relid, cmd);

	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
	{
		Oid			below = lfirst_oid(lc);
		Relation	rel;

		if (!locked_by_me(below))
			continue;
		rel = try_relation_open(below, NoLock);
		if (rel == NULL)
			continue;
		check_fence_triggers(rel);
		if (below == relid && changes_owner(cmd) && truncate_trigger_of(rel) != NULL)
			allow_fence_for(rel->rd_rel->relowner);
		if (unlikely(OidIsValid(citus_shard_table(rel))))
			added += protect_citus_shard(rel);
		if (unlikely(citus) && below == relid && creates_table(relid, cmd))
			added += fence_new_citus_placement(rel);
		else if (unlikely(citus))
			retire_interim_fences(rel);
		relation_close(rel, NoLock);
	}
	foreach(lc, added_parts)
	{
		Oid			part = lfirst_oid(lc);
		Oid			parent = get_partition_parent(part, true);
		Relation	prel;
		bool		fenced;
		ListCell   *plc;

		if (!OidIsValid(parent))
			continue;
		prel = table_open(parent, NoLock);	/* locked by the command */
		fenced = truncate_trigger_of(prel) != NULL;
		table_close(prel, NoLock);
		if (!fenced)
			continue;
		/* the command made these partitions of the table: it may lock them */
		LockRelationOid(part, ShareRowExclusiveLock);
		foreach(plc, find_all_inheritors(part, ShareRowExclusiveLock, NULL))
		{
			Oid			below = lfirst_oid(plc);

			if (has_fence_trigger(below, TRUNCATE_TRIGGER_NAME))
				continue;
			require_trigger_right(below);
			prel = table_open(below, NoLock);
			check_fence_triggers(prel);
			table_close(prel, NoLock);
			create_truncate_trigger(below);
			CommandCounterIncrement();
			added++;
		}
	}
	return added;
}

FENCING_FUNCTION(fencing_fence_new_partitions);

/*
 * fencing.fence_new_partitions(), the event trigger after CREATE TABLE and
 * ALTER TABLE, runs as the role whose command fired it: for each table the
 * command touched in a tree where some table is fenced (and, with Citus,
 * each table it created), protect_ddl_command().
 * The commands (pointers Postgres keeps for the event trigger while it
 * runs) never leave this function: no SQL-callable function takes one.
 * The tree is read from the catalogs without locking it (a parallel
 * restore altering two partitions at once would deadlock on it).
 */
Datum
fencing_fence_new_partitions(PG_FUNCTION_ARGS)
{
	static const char *sql =
		"SELECT d.objid, d.command"
		"  FROM pg_catalog.pg_event_trigger_ddl_commands() AS d"
		" WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
		"   AND d.object_type OPERATOR(pg_catalog.=) 'table'"
		"   AND (EXISTS (WITH RECURSIVE tree(relid) AS ("
		"                 SELECT coalesce(pg_catalog.pg_partition_root(d.objid),"
		"                                 d.objid::pg_catalog.regclass)::pg_catalog.oid"
		"                 UNION ALL"
		"                 SELECT i.inhrelid FROM pg_catalog.pg_inherits AS i"
		"                   JOIN tree AS t ON i.inhparent OPERATOR(pg_catalog.=) t.relid)"
		"               SELECT 1 FROM tree AS p"
		"                 JOIN pg_catalog.pg_trigger AS tg"
		"                   ON tg.tgrelid OPERATOR(pg_catalog.=) p.relid"
		"                WHERE tg.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure)"
		/* with Citus, each table created: it may be a new shard (fence_new_citus_placement()) */
		"        OR ($1 AND d.command_tag OPERATOR(pg_catalog.=) 'CREATE TABLE'))";
	MemoryContext caller = CurrentMemoryContext;
	List	   *relids = NIL;
	List	   *commands = NIL;
	ListCell   *lr;
	ListCell   *lcmd;
	bool		citus;
	Oid			argtypes[1] = {BOOLOID};
	Datum		citus_arg[1];

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"fence_new_partitions\" was not called by an event trigger")));

	restored_fences_note();

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	citus = citus_installed();
	citus_arg[0] = BoolGetDatum(citus);
	if (SPI_execute_with_args(sql, 1, argtypes, citus_arg, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "reading the commands of the event trigger failed");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		objid = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		Datum		command = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
		MemoryContext spi;

		if (isnull)
			continue;
		/* the lists live in the caller's context, across SPI_finish() */
		spi = MemoryContextSwitchTo(caller);
		relids = lappend_oid(relids, DatumGetObjectId(objid));
		commands = lappend(commands, DatumGetPointer(command));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	forboth(lr, relids, lcmd, commands)
		(void) protect_ddl_command(lfirst_oid(lr), (const CollectedCommand *) lfirst(lcmd), citus);
	SPI_finish();
	PG_RETURN_VOID();
}
