/*-------------------------------------------------------------------------
 *
 * scope_admin.c
 *	  The SQL API of scope ownership: create_scope(), grant_scope(),
 *	  revoke_scope(), alter_scope_owner(), alter_scope_tokens().
 *
 * These are ordinary (not SECURITY DEFINER) C functions, so the caller is
 * GetUserId(), as for any Postgres privilege check; they write the registry
 * and the grants as the extension owner.  Who may create scopes is decided
 * by EXECUTE on fencing.create_scope(), revoked from PUBLIC.
 *
 *-------------------------------------------------------------------------
 */
#include "base/input_checks.h"
#include "security/scope_acl.h"
#include "marks/scope_mark.h"
#include "state/cluster_marks.h"
#include "state/scope_rows.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/regproc.h"

static char *
scope_arg(FunctionCallInfo fcinfo, int n)
{
	char	   *scope;

	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fencing scope name must not be null")));
	scope = text_to_cstring(PG_GETARG_TEXT_PP(n));
	fencing_check_scope_name(scope);
	return scope;
}

static bool
tokens_arg(FunctionCallInfo fcinfo, int n)
{
	char	   *tokens;

	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tokens must not be null"),
				 errhint("A scope's tokens are \"issued\" or \"external\".")));
	tokens = text_to_cstring(PG_GETARG_TEXT_PP(n));
	if (strcmp(tokens, "issued") != 0 && strcmp(tokens, "external") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized fencing scope tokens \"%s\"", tokens),
				 errhint("A scope's tokens are \"issued\" (only terms of fence_next_epoch() and leases) "
						 "or \"external\" (numbers from your own lock service).")));
	return strcmp(tokens, "issued") == 0;
}

/*
 * The caller may act as "role" (to make it an owner), as for ALTER ... OWNER
 * TO; the role must exist (a regrole argument may hold any OID).
 */
static void
require_may_become(Oid role)
{
	if (GetUserNameFromId(role, true) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role with OID %u does not exist", role)));
	/* as ALTER ... OWNER TO checks it: from 16, a membership WITH SET */
	if (!superuser() && !member_can_set_role(GetUserId(), role))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be able to SET ROLE \"%s\"", GetUserNameFromId(role, false)),
				 errdetail("Only a role that may SET ROLE to a role (a member of it; from PostgreSQL 16, one whose membership has SET) can make it the owner of a fencing scope.")));
}

/* The scope must exist and the caller must own it; returns its info. */
static void
require_owner(const char *scope, ScopeInfo *info)
{
	if (!fencing_sql_at_least(FENCING_SQL_1_2))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"fencing\" must be updated to manage scope owners"),
				 errhint("Run ALTER EXTENSION fencing UPDATE.")));
	if (!scope_info_read(scope, info))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("fencing scope \"%s\" does not exist", scope)));
	scope_acl_require(scope, SCOPE_PRIV_OWNER, GetUserId(), SCOPE_MISSING_OK, info);
}

/* 'public' (any case) is PUBLIC, 0; else a role name as regrole reads it. */
static Oid
grantee_arg(FunctionCallInfo fcinfo, int n)
{
	char	   *name;

	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("grantee must not be null"),
				 errhint("Name a role, or 'public'.")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(n));
	if (pg_strcasecmp(name, "public") == 0)
		return InvalidOid;
	return DatumGetObjectId(DirectFunctionCall1(regrolein, CStringGetDatum(name)));
}

/*
 * fencing.create_scope(scope text, tokens text DEFAULT 'issued',
 *                      owner regrole DEFAULT NULL): NULL owner is the caller.
 */
FENCING_FUNCTION(fencing_create_scope);

Datum
fencing_create_scope(PG_FUNCTION_ARGS)
{
	char	   *scope = scope_arg(fcinfo, 0);
	bool		issued = tokens_arg(fcinfo, 1);
	Oid			owner = PG_ARGISNULL(2) ? GetUserId() : PG_GETARG_OID(2);

	if (!fencing_sql_at_least(FENCING_SQL_1_2))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"fencing\" must be updated to create scopes"),
				 errhint("Run ALTER EXTENSION fencing UPDATE.")));
	if (owner != GetUserId())
		require_may_become(owner);
	if (!scope_rows_create(scope, owner, issued))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("fencing scope \"%s\" already exists", scope),
				 errhint("Scopes are never dropped; its owner can hand it over with fencing.alter_scope_owner().")));
	PG_RETURN_VOID();
}

/*
 * The arguments of grant_scope() and revoke_scope(): (scope, privilege,
 * grantee); only the scope's owner may change its privileges.
 */
static void
privilege_change_args(FunctionCallInfo fcinfo, char **scope,
					  ScopePrivilege *priv, Oid *grantee)
{
	ScopeInfo	info;

	*scope = scope_arg(fcinfo, 0);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("privilege must not be null")));
	*priv = scope_privilege_from_name(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	*grantee = grantee_arg(fcinfo, 2);
	require_owner(*scope, &info);
	/*
	 * Where marks are distributed the change goes to every node
	 * (cluster_marks_feed()): changes of one scope's grants are fed in turn,
	 * under its lock, each reading the grants the one before committed.
	 */
	if (cluster_marks_enabled())
		(void) scope_mark_lock_exclusive(*scope, SCOPE_MISSING_OK, SCOPE_PRIV_OWNER, NULL);
}

/* fencing.grant_scope(scope text, privilege text, grantee text) returns boolean */
FENCING_FUNCTION(fencing_grant_scope);

Datum
fencing_grant_scope(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"INSERT INTO fencing.scope_grants (scope, grantee, privilege, granted_by) "
		"VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
	char	   *scope;
	ScopePrivilege priv;
	Oid			grantee;
	Oid			argtypes[4] = {TEXTOID, OIDOID, TEXTOID, OIDOID};
	Datum		values[4];
	bool		granted;

	privilege_change_args(fcinfo, &scope, &priv, &grantee);
	values[0] = CStringGetTextDatum(scope);
	values[1] = ObjectIdGetDatum(grantee);
	values[2] = CStringGetTextDatum(scope_privilege_name(priv));
	values[3] = ObjectIdGetDatum(GetUserId());
	granted = fencing_execute_as_owner(&plan, sql, 4, argtypes, values) > 0;
	cluster_marks_feed(scope, false);
	PG_RETURN_BOOL(granted);
}

/* fencing.revoke_scope(scope text, privilege text, grantee text) returns boolean */
FENCING_FUNCTION(fencing_revoke_scope);

Datum
fencing_revoke_scope(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"DELETE FROM fencing.scope_grants WHERE scope OPERATOR(pg_catalog.=) $1 "
		"AND grantee OPERATOR(pg_catalog.=) $2 AND privilege OPERATOR(pg_catalog.=) $3";
	char	   *scope;
	ScopePrivilege priv;
	Oid			grantee;
	Oid			argtypes[3] = {TEXTOID, OIDOID, TEXTOID};
	Datum		values[3];
	bool		revoked;

	privilege_change_args(fcinfo, &scope, &priv, &grantee);
	values[0] = CStringGetTextDatum(scope);
	values[1] = ObjectIdGetDatum(grantee);
	values[2] = CStringGetTextDatum(scope_privilege_name(priv));
	revoked = fencing_execute_as_owner(&plan, sql, 3, argtypes, values) > 0;
	cluster_marks_feed(scope, false);
	PG_RETURN_BOOL(revoked);
}

/* fencing.alter_scope_owner(scope text, owner regrole) */
FENCING_FUNCTION(fencing_alter_scope_owner);

Datum
fencing_alter_scope_owner(PG_FUNCTION_ARGS)
{
	char	   *scope = scope_arg(fcinfo, 0);
	Oid			owner;
	ScopeInfo	info;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("owner must not be null")));
	owner = PG_GETARG_OID(1);
	require_owner(scope, &info);
	require_may_become(owner);
	/*
	 * Writers of many scopes lock them by their owner (marks/scope_lock.c):
	 * none may still hold this one by its old owner once it has a new one.
	 */
	(void) scope_mark_lock_exclusive(scope, SCOPE_MISSING_OK, SCOPE_PRIV_OWNER, NULL);
	scope_rows_set_owner(scope, owner);
	PG_RETURN_VOID();
}

/* fencing.alter_scope_tokens(scope text, tokens text) */
FENCING_FUNCTION(fencing_alter_scope_tokens);

Datum
fencing_alter_scope_tokens(PG_FUNCTION_ARGS)
{
	char	   *scope = scope_arg(fcinfo, 0);
	bool		issued = tokens_arg(fcinfo, 1);
	ScopeInfo	info;

	require_owner(scope, &info);
	scope_rows_set_tokens(scope, issued);
	PG_RETURN_VOID();
}
