/*-------------------------------------------------------------------------
 *
 * extension_state.c
 *	  Lookup of the extension's tables and sequence, and running our own
 *	  statements as the role that owns them.
 *
 * OIDs are cached per backend and forgotten on any relcache invalidation of
 * the cached relations, so DROP/CREATE EXTENSION in a live session works.
 * The same relcache callback serves citus_shards.c: a backend has ten
 * callback slots, and with Citus loaded an eleventh registration is FATAL.
 *
 *-------------------------------------------------------------------------
 */
#include "state/citus_shards.h"
#include "state/extension_state.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

/* The extension's relations that C code opens, by name; see FencingRelation. */
static const char *const relation_names[FENCING_REL_COUNT] = {
	"scopes", "scopes_pkey", "epoch_seq", "terms", "leases", "leases_pkey", "clock"
};
static Oid	relation_oids[FENCING_REL_COUNT];
static int	sql_version = -1;	/* a FencingSql; -1: not known */
static Oid	scopes_relfilenode = InvalidOid;	/* known with sql_version */

void
extension_state_relcache_changed(Oid relid)
{
	bool		known = relid == InvalidOid;

	for (int i = 0; i < FENCING_REL_COUNT && !known; i++)
		known = relid == relation_oids[i];
	if (known)
	{
		memset(relation_oids, 0, sizeof(relation_oids));
		sql_version = -1;
	}
	citus_shards_relcache_invalidate(relid);
}

static Oid
lookup_object(const char *relname)
{
	Oid			nsp = get_namespace_oid(FENCING_SCHEMA, true);
	Oid			relid = OidIsValid(nsp) ? get_relname_relid(relname, nsp) : InvalidOid;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"fencing\" is not installed in this database"),
				 errdetail("Relation \"%s.%s\" does not exist.", FENCING_SCHEMA, relname),
				 errhint("Run CREATE EXTENSION fencing.")));
	return relid;
}

Oid
fencing_relid(FencingRelation which)
{
	if (!OidIsValid(relation_oids[which]))
	{
		relation_oids[which] = lookup_object(relation_names[which]);
	}
	return relation_oids[which];
}

/*
 * fencing.scopes has 7 columns in 1.0 and 1.1 (Natts_scopes_1_1), 9 in 1.2
 * and 1.3 (owner, tokens), 10 from 1.4 (id); no version drops one.
 */
FencingSql
fencing_sql_version(void)
{
	if (sql_version < 0)
	{
		Oid			nsp = get_namespace_oid(FENCING_SCHEMA, true);
		Oid			relid = OidIsValid(nsp) ? get_relname_relid(relation_names[FENCING_REL_SCOPES], nsp) : InvalidOid;
		HeapTuple	tup;
		int			natts = 0;

		if (!OidIsValid(relid))
			return FENCING_SQL_NONE;	/* not cached: CREATE EXTENSION sends no message for us */
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
		if (HeapTupleIsValid(tup))
		{
			natts = ((Form_pg_class) GETSTRUCT(tup))->relnatts;
			scopes_relfilenode = ((Form_pg_class) GETSTRUCT(tup))->relfilenode;
			ReleaseSysCache(tup);
		}
		relation_oids[FENCING_REL_SCOPES] = relid;
		sql_version = natts >= Anum_scopes_id ? FENCING_SQL_1_4 :
			natts >= Anum_scopes_tokens ? FENCING_SQL_1_2 :
			natts >= Natts_scopes_1_1 ? FENCING_SQL_1_1 : FENCING_SQL_NONE;
	}
	return (FencingSql) sql_version;
}

void
fencing_registry_now(FencingRegistry *registry)
{
	registry->version = (uint32) fencing_sql_version();
	registry->relid = registry->version == FENCING_SQL_NONE ? InvalidOid :
		relation_oids[FENCING_REL_SCOPES];
	registry->relfilenode = scopes_relfilenode;
}

Oid
fencing_scopes_relid(void)
{
	return fencing_relid(FENCING_REL_SCOPES);
}

/* Without a lookup: for invalidation callbacks, which must not do catalog access. */
Oid
fencing_scopes_relid_if_known(void)
{
	return relation_oids[FENCING_REL_SCOPES];
}

Oid
fencing_scopes_pkey_relid(void)
{
	return fencing_relid(FENCING_REL_SCOPES_PKEY);
}

Oid
fencing_epoch_seq_relid(void)
{
	return fencing_relid(FENCING_REL_EPOCH_SEQ);
}

Oid
fencing_clock_relid_if_installed(void)
{
	if (!OidIsValid(relation_oids[FENCING_REL_CLOCK]))
	{
		Oid			nsp = get_namespace_oid(FENCING_SCHEMA, true);

		if (OidIsValid(nsp))
			relation_oids[FENCING_REL_CLOCK] =
				get_relname_relid(relation_names[FENCING_REL_CLOCK], nsp);
	}
	return relation_oids[FENCING_REL_CLOCK];
}

Oid
fencing_relation_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

static Oid
state_owner(void)
{
	return fencing_relation_owner(fencing_scopes_relid());
}

void
fencing_become_owner(FencingUserContext *ctx)
{
	Oid			owner = state_owner();

	GetUserIdAndSecContext(&ctx->saved_userid, &ctx->saved_sec_context);
	ctx->guc_nestlevel = 0;
	SetUserIdAndSecContext(owner,
						   ctx->saved_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION |
						   SECURITY_NOFORCE_RLS);
}

/*
 * As a relation's owner, as a security-restricted operation (as VACUUM,
 * ANALYZE and CREATE INDEX run a table's code): the owner's functions that
 * DDL evaluates (a partition key's expression folded while the relcache
 * builds it, an index expression) run as the role that wrote them and
 * cannot change the session's role or leave state behind.
 */
void
fencing_become_relation_owner(Oid relid, FencingUserContext *ctx)
{
	Oid			owner = fencing_relation_owner(relid);

	GetUserIdAndSecContext(&ctx->saved_userid, &ctx->saved_sec_context);
	SetUserIdAndSecContext(owner,
						   ctx->saved_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	/*
	 * A settings nest level, undone by fencing_restore_user(): a setting the
	 * owner's code makes with set_config(..., false) (a search_path that
	 * puts its own functions first) must not outlive the switch into the
	 * caller's session, a superuser's perhaps.  Our statements qualify every
	 * name: the search path is the safe one meanwhile.
	 */
	ctx->guc_nestlevel = NewGUCNestLevel();
#if PG_VERSION_NUM >= 170000
	RestrictSearchPath();
#else
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
#endif
}

/* As a role of a user's, for our own statements only (no security restriction). */
void
fencing_become_role(Oid role, FencingUserContext *ctx)
{
	GetUserIdAndSecContext(&ctx->saved_userid, &ctx->saved_sec_context);
	ctx->guc_nestlevel = 0;
	SetUserIdAndSecContext(role, ctx->saved_sec_context | SECURITY_LOCAL_USERID_CHANGE);
}

void
fencing_restore_user(const FencingUserContext *ctx)
{
	if (ctx->guc_nestlevel > 0)
		AtEOXact_GUC(false, ctx->guc_nestlevel);
	SetUserIdAndSecContext(ctx->saved_userid, ctx->saved_sec_context);
}

SPIPlanPtr
fencing_saved_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	if (*slot == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare(sql, nargs, argtypes);

		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		*slot = plan;
	}
	return *slot;
}

/*
 * Our fixed statements run as the owner of the extension's tables, with a
 * fresh snapshot (under REPEATABLE READ the transaction's own would raise
 * 40001 on a row another transaction changed since), firing triggers (the
 * mark-cache invalidation trigger on fencing.scopes).  Callers that read
 * the result connect, execute and finish themselves; the others call
 * fencing_execute_as_owner().
 *
 * Who runs what with the owner's rights (audited for 1.4): the owner
 * is usually a superuser, so nothing a user controls may run while we are
 * it.  Every switch to the owner (fencing_become_owner(), here and alone)
 * is a SECURITY_RESTRICTED_OPERATION, and:
 *   - SPI as the owner (scope_mark.c raise, scope_admin.c, scope_acl.c,
 *     failover_fence.c, cluster_apply.c) plans and runs only fixed
 *     statements, every name schema-qualified, over the extension's own
 *     tables (fencing.scopes, scope_grants, terms, leases, clock,
 *     node_state).  Only their owner can add an index,
 *     trigger, rule, policy, default or inheritance child to those, so
 *     planning and running them calls no user code (their row security
 *     policy calls fencing.may_read(), C).  Values a user chose are
 *     parameters, never SQL text.
 *   - epoch_clock.c calls setval() on fencing.epoch_seq, ours.
 *   - protect.c grants EXECUTE on fencing.fence_trigger() (ours) to the
 *     owner of a table it fences; the fence's DDL about the table itself
 *     runs as the table's owner (fencing_become_relation_owner()), never
 *     as ours: DDL can evaluate the table's own code.  So does the interim
 *     fence of a Citus shard's new placement (protect.c,
 *     create_interim_fence(): the table's own fence triggers copied onto
 *     the shard its owner's connection just created).  It fires while
 *     Citus copies the rows in, as the role running the shard operation,
 *     so the only WHEN it copies is fencing.raise_pending() (C): not a
 *     condition the owner wrote on a fence trigger made by hand.
 *   - Nothing reads a user's table as the owner: the TRUNCATE fence
 *     (fence_trigger.c) reads the truncated table's heap directly, with no
 *     query, as the caller.  Direct row access (direct_row.c, lease.c)
 *     touches only our tables.
 *   - fencing.fence_new_partitions(), the event trigger, runs as the role
 *     whose DDL fired it (1.5; SECURITY DEFINER before).
 * test/stages/check_layers lists every caller of a switch and fails on a
 * new one.
 */
void
fencing_spi_connect_as_owner(FencingUserContext *uctx)
{
	fencing_become_owner(uctx);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

int
fencing_spi_execute(SPIPlanPtr *slot, const char *sql, int nargs,
					Oid *argtypes, Datum *values, bool read_only)
{
	int			rc = SPI_execute_snapshot(fencing_saved_plan(slot, sql, nargs, argtypes),
										  values, NULL, GetLatestSnapshot(),
										  InvalidSnapshot, read_only, !read_only, 0);

	if (rc < 0)
		elog(ERROR, "\"%s\" failed: %s", sql, SPI_result_code_string(rc));
	return rc;
}

void
fencing_spi_finish_as_owner(const FencingUserContext *uctx)
{
	SPI_finish();
	fencing_restore_user(uctx);
}

uint64
fencing_execute_as_owner(SPIPlanPtr *slot, const char *sql, int nargs,
						 Oid *argtypes, Datum *values)
{
	FencingUserContext uctx;
	uint64		rows;

	fencing_spi_connect_as_owner(&uctx);
	(void) fencing_spi_execute(slot, sql, nargs, argtypes, values, false);
	rows = SPI_processed;
	fencing_spi_finish_as_owner(&uctx);
	return rows;
}

