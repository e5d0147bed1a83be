/*-------------------------------------------------------------------------
 *
 * scope_acl.c
 *	  Scope owners and privileges, checked where each decision is made, and
 *	  the scopes a table with a scope column may write to: those its owner
 *	  holds the write privilege on, checked before any scope lock.
 *
 * Every scope has a row in fencing.scopes naming its owner and its token
 * mode, and privileges in fencing.scope_grants (grantee 0 is PUBLIC):
 *
 *   lead   issue terms (fence_next_epoch), take/renew/release leases
 *   write  raise the mark by a write; bind a table to the scope (protect)
 *   read   see the scope's rows (any privilege implies it)
 *
 * The owner (or any role with the privileges of the owner role) has all of
 * them, and alone may grant, revoke and reset the mark; superusers bypass.
 * Only roles that may execute fencing.create_scope() create scopes, also
 * implicitly, and then own them: no role can squat a name.
 *
 * A scope whose tokens are 'issued' admits a raise of its mark by a write
 * only to a term the clock issued for it: a typed or forged token above the
 * latest term fails with ZF003, whatever the table's stale-write policy
 * (raised by the caller, which knows the table written).
 *
 * A raise is authorized for two roles: the current user, who runs the write,
 * and the role that offered the token (scope_acl_set_offerer(): the role
 * that declared it with fencing.use_token(), or the current user for a
 * token in the row's column).  They differ when a write runs as another
 * role than the one whose token it carries: a foreign key's cascade runs as
 * the referencing table's owner (a superuser, maybe), a SECURITY DEFINER
 * function as its owner.  Either role's write privilege alone would let the
 * other borrow it.
 *
 * Nothing here runs on the hot path: the trigger calls in only to raise a
 * mark.  Reads run as the extension owner (the registry row: a direct index
 * scan) with a fresh snapshot (a grant or
 * revoke that committed is seen at once, also under REPEATABLE READ).
 *
 *-------------------------------------------------------------------------
 */
#include "base/input_checks.h"
#include "base/scope_tables.h"
#include "security/scope_acl.h"
#include "state/scope_rows.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/rel.h"
#include "utils/inval.h"

#include "state/direct_row.h"

static const char *const privilege_names[] = {"read", "write", "lead", "owner"};

static const char *role_name(Oid roleid);

/* The role that offered the token of the write being judged; 0: the current user. */
static Oid	token_offerer = InvalidOid;

Oid
scope_acl_set_offerer(Oid role)
{
	Oid			previous = token_offerer;

	token_offerer = role;
	return previous;
}

Oid
scope_acl_offerer(void)
{
	return OidIsValid(token_offerer) ? token_offerer : GetUserId();
}

/* An error leaves no offerer behind for the statements that follow. */
void
scope_acl_at_xact_end(void)
{
	token_offerer = InvalidOid;
}

void
scope_acl_at_subxact_abort(void)
{
	token_offerer = InvalidOid;
}

ScopePrivilege
scope_privilege_from_name(const char *name)
{
	for (int i = SCOPE_PRIV_READ; i <= SCOPE_PRIV_LEAD; i++)
		if (strcmp(name, privilege_names[i]) == 0)
			return (ScopePrivilege) i;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unrecognized fencing scope privilege \"%s\"", name),
			 errhint("A scope privilege is \"lead\", \"write\" or \"read\".")));
	return SCOPE_PRIV_READ;		/* keep compiler quiet */
}

const char *
scope_privilege_name(ScopePrivilege priv)
{
	return privilege_names[priv];
}

/*
 * The registry row, read by an index scan under a fresh snapshot
 * (state/direct_row.c), without SPI: no statement to start and end, no
 * permission checks (the extension's own read, as its owner would do it;
 * row security does not restrict the owner).  Through SPI each read cost
 * about 29,000 instructions.
 */
void
scope_info_from_row(Relation scopes, HeapTuple row, ScopeInfo *info)
{
	TupleDesc	desc;
	bool		isnull;
	Datum		d;

	memset(info, 0, sizeof(*info));
	info->epoch = -1;
	info->mark = -1;
	if (!HeapTupleIsValid(row))
		return;
	desc = RelationGetDescr(scopes);
	info->exists = true;
	d = heap_getattr(row, Anum_scopes_epoch, desc, &isnull);
	if (!isnull)
		info->epoch = DatumGetInt64(d);
	d = heap_getattr(row, Anum_scopes_mark, desc, &isnull);
	if (!isnull)
		info->mark = DatumGetInt64(d);
	if (!fencing_sql_at_least(FENCING_SQL_1_2))
		return;					/* no owner, no tokens yet */
	d = heap_getattr(row, Anum_scopes_owner, desc, &isnull);
	if (!isnull)
		info->owner = DatumGetObjectId(d);
	d = heap_getattr(row, Anum_scopes_tokens, desc, &isnull);
	if (!isnull)
	{
		text	   *t = DatumGetTextPP(d);

		info->issued = VARSIZE_ANY_EXHDR(t) == 6 &&
			memcmp(VARDATA_ANY(t), "issued", 6) == 0;
	}
}

bool
scope_info_read(const char *scope, ScopeInfo *info)
{
	Relation	rel = table_open(fencing_scopes_relid(), AccessShareLock);
	HeapTuple	row = direct_row_fetch(rel, fencing_scopes_pkey_relid(), scope);

	scope_info_from_row(rel, row, info);
	if (row != NULL)
		heap_freetuple(row);
	table_close(rel, AccessShareLock);
	return info->exists;
}

/* Whether a grant gives roleid priv on the scope (directly, by membership or to PUBLIC). */
static bool
granted(const char *scope, ScopePrivilege priv, Oid roleid)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"SELECT grantee, privilege FROM fencing.scope_grants "
		"WHERE scope OPERATOR(pg_catalog.=) $1";
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	FencingUserContext uctx;
	bool		found = false;

	values[0] = CStringGetTextDatum(scope);
	fencing_spi_connect_as_owner(&uctx);
	fencing_spi_execute(&plan, sql, 1, argtypes, values, true);
	for (uint64 i = 0; i < SPI_processed && !found; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		isnull;
		Oid			grantee = DatumGetObjectId(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
		char	   *privilege = SPI_getvalue(tup, SPI_tuptable->tupdesc, 2);

		if ((priv == SCOPE_PRIV_READ || strcmp(privilege, privilege_names[priv]) == 0) &&
			(grantee == InvalidOid || has_privs_of_role(roleid, grantee)))
			found = true;
	}
	fencing_spi_finish_as_owner(&uctx);
	return found;
}

bool
scope_acl_has(const char *scope, const ScopeInfo *info, ScopePrivilege priv, Oid roleid)
{
	if (superuser_arg(roleid))
		return true;
	if (!info->exists)
		return false;
	if (has_privs_of_role(roleid, info->owner))
		return true;
	if (priv == SCOPE_PRIV_OWNER)
		return false;
	return granted(scope, priv, roleid);
}

bool
scope_acl_may_create(Oid roleid)
{
	Oid			argtypes[3] = {TEXTOID, TEXTOID, REGROLEOID};
	Oid			fn;

	if (superuser_arg(roleid))
		return true;
	fn = LookupFuncName(list_make2(makeString(FENCING_SCHEMA), makeString("create_scope")),
						3, argtypes, true);
	return OidIsValid(fn) && pg_proc_aclcheck(fn, roleid, ACL_EXECUTE) == ACLCHECK_OK;
}

static const char *
role_name(Oid roleid)
{
	const char *name = GetUserNameFromId(roleid, true);

	return name != NULL ? name : psprintf("%u", roleid);
}

static void
deny(const char *scope, ScopePrivilege priv, Oid roleid)
{
	static const char *const what[] = {
		"Reading the scope",
		"Raising the scope's mark by a write, or binding a table to the scope,",
		"Issuing a term or taking, renewing or releasing a lease",
		"Resetting the mark, granting, revoking or changing the owner"
	};
	const char *role = role_name(roleid);

	if (priv == SCOPE_PRIV_OWNER)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for fencing scope \"%s\"", scope),
				 errdetail("%s is for the owner of scope \"%s\" (or a superuser); role \"%s\" is not its owner.",
						   what[priv], scope, role),
				 errhint("The owner can hand the scope over with fencing.alter_scope_owner().")));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for fencing scope \"%s\"", scope),
			 errdetail("%s needs the \"%s\" privilege on scope \"%s\", which role \"%s\" does not have.",
					   what[priv], privilege_names[priv], scope, role),
			 errhint("The scope's owner can grant it: SELECT fencing.grant_scope(%s, '%s', %s);",
					 quote_literal_cstr(scope), privilege_names[priv],
					 quote_literal_cstr(quote_identifier(role)))));
}

static void
deny_create(const char *scope, Oid roleid)
{
	const char *role = role_name(roleid);

	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to create fencing scope \"%s\"", scope),
			 errdetail("Scope \"%s\" does not exist; creating it needs EXECUTE on function "
					   "fencing.create_scope(text, text, regrole), which role \"%s\" does not have.",
					   scope, role),
			 errhint("A superuser can allow it: GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO %s;",
					 quote_identifier(role))));
}

void
scope_acl_require_known(const char *scope, ScopePrivilege priv, Oid roleid,
						ScopeMissing missing, ScopeInfo *info)
{
	bool		create = missing == SCOPE_MISSING_CREATE_ISSUED ||
		missing == SCOPE_MISSING_CREATE_EXTERNAL;

	if (!fencing_sql_at_least(FENCING_SQL_1_2))
	{
		/* 1.1's schema, until ALTER EXTENSION fencing UPDATE: no owners yet */
		if (create && !info->exists)
			(void) scope_rows_create(scope, InvalidOid, false);
		return;
	}

	if (!info->exists)
	{
		if (missing == SCOPE_MISSING_OK)
			return;
		if (!scope_acl_may_create(roleid))
			deny_create(scope, roleid);
		if (!create)
			return;
		/* a concurrent creator may win: then its privileges decide, below */
		(void) scope_rows_create(scope, roleid, missing == SCOPE_MISSING_CREATE_ISSUED);
		if (!scope_info_read(scope, info))
		{
			Relation	scopes = table_open(fencing_scopes_relid(), AccessShareLock);

			direct_row_report_deleted(scopes, scope);
		}
	}
	if (!scope_acl_has(scope, info, priv, roleid))
		deny(scope, priv, roleid);
}

void
scope_acl_require(const char *scope, ScopePrivilege priv, Oid roleid,
				  ScopeMissing missing, ScopeInfo *info)
{
	if (fencing_sql_at_least(FENCING_SQL_1_2))
		(void) scope_info_read(scope, info);
	else
		scope_info_from_row(NULL, NULL, info);
	scope_acl_require_known(scope, priv, roleid, missing, info);
}

/* Whether token is a term issued for the scope. */
static bool
term_issued(const char *scope, int64 token)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"SELECT 1 FROM fencing.terms "
		"WHERE scope OPERATOR(pg_catalog.=) $1 AND epoch OPERATOR(pg_catalog.=) $2";
	Oid			argtypes[2] = {TEXTOID, INT8OID};
	Datum		values[2];
	FencingUserContext uctx;
	bool		found;

	values[0] = CStringGetTextDatum(scope);
	values[1] = Int64GetDatum(token);
	fencing_spi_connect_as_owner(&uctx);
	fencing_spi_execute(&plan, sql, 2, argtypes, values, true);
	found = SPI_processed > 0;
	fencing_spi_finish_as_owner(&uctx);
	return found;
}

/*
 * An 'issued' scope's mark rises by a write only to a term issued for it
 * (one above the mark after a reset_mark(), say); anything else is a typo or
 * a forgery, and an error whatever the table's stale-write policy (ZF003,
 * raised by the caller: telemetry/rejection.c names the table written).
 */
static bool
token_admitted(const char *scope, const ScopeInfo *info, int64 token)
{
	return !info->exists || !info->issued || term_issued(scope, token);
}

/*
 * The role that offered the token must hold write on the scope too, when it
 * is not the current user.  A scope the current user is about to create
 * will be the current user's: the offerer then needs its privileges.
 */
static void
require_offerer(const char *scope, int64 token, const ScopeInfo *info)
{
	Oid			user = GetUserId();
	Oid			offerer = token_offerer;
	const char *offerer_name;
	const char *user_name;

	if (!OidIsValid(offerer) || offerer == user || superuser_arg(offerer))
		return;
	if (info->exists ? scope_acl_has(scope, info, SCOPE_PRIV_WRITE, offerer) :
		has_privs_of_role(offerer, user))
		return;
	offerer_name = role_name(offerer);
	user_name = role_name(user);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for fencing scope \"%s\"", scope),
			 errdetail("Role \"%s\" offered token " INT64_FORMAT " for a write that runs as role \"%s\" "
					   "(a foreign key's cascade, a SECURITY DEFINER function); raising the scope's mark "
					   "needs the \"write\" privilege on scope \"%s\" for both, and role \"%s\" does not have it.",
					   offerer_name, token, user_name, scope, offerer_name),
			 errhint("The scope's owner can grant it: SELECT fencing.grant_scope(%s, 'write', %s);",
					 quote_literal_cstr(scope),
					 quote_literal_cstr(quote_identifier(offerer_name)))));
}

bool
scope_acl_check_raise(const char *scope, int64 token, ScopeInfo *info)
{
	if (!fencing_sql_at_least(FENCING_SQL_1_2))
		return true;
	scope_acl_require(scope, SCOPE_PRIV_WRITE, GetUserId(), SCOPE_MISSING_MAY_CREATE, info);
	require_offerer(scope, token, info);
	return token_admitted(scope, info, token);
}

bool
scope_acl_may_raise(const char *scope, int64 token, const ScopeInfo *info)
{
	Oid			user = GetUserId();
	Oid			offerer = token_offerer;

	if (!fencing_sql_at_least(FENCING_SQL_1_2))
		return true;
	if (!info->exists || !scope_acl_has(scope, info, SCOPE_PRIV_WRITE, user))
		return false;
	if (OidIsValid(offerer) && offerer != user && !superuser_arg(offerer) &&
		!scope_acl_has(scope, info, SCOPE_PRIV_WRITE, offerer))
		return false;
	return token_admitted(scope, info, token);
}

bool
scope_acl_admit_raise(const char *scope, int64 token, ScopeInfo *info)
{
	scope_acl_require(scope, SCOPE_PRIV_WRITE, GetUserId(), SCOPE_MISSING_CREATE_EXTERNAL, info);
	if (fencing_sql_at_least(FENCING_SQL_1_2))
		require_offerer(scope, token, info);
	return token_admitted(scope, info, token);
}

/* Superusers and monitoring roles read every scope. */
static bool
reads_every_scope(Oid roleid)
{
	return superuser_arg(roleid) ||
		has_privs_of_role(roleid, ROLE_PG_MONITOR) ||
		has_privs_of_role(roleid, ROLE_PG_READ_ALL_STATS);
}

bool
scope_acl_may_read(const char *scope, Oid roleid)
{
	ScopeInfo	info;

	if (reads_every_scope(roleid))
		return true;
	if (strlen(scope) == 0 || strlen(scope) > FENCING_SCOPE_MAX_LEN)
		return false;
	return fencing_sql_at_least(FENCING_SQL_1_2) &&
		scope_info_read(scope, &info) &&
		scope_acl_has(scope, &info, SCOPE_PRIV_READ, roleid);
}

/*
 * fencing.may_read(scope text): the row-level security policy of the
 * extension's tables.  Superusers, members of pg_monitor or
 * pg_read_all_stats, the owner and any grantee of the scope.  Answers are
 * kept for the rest of the query (per scope).
 */
typedef struct ReadAnswer
{
	char		scope[FENCING_SCOPE_MAX_LEN + 1];	/* hash key */
	bool		may;
} ReadAnswer;

FENCING_FUNCTION(fencing_may_read);

Datum
fencing_may_read(PG_FUNCTION_ARGS)
{
	Oid			roleid = GetUserId();
	char	   *scope = text_to_cstring(PG_GETARG_TEXT_PP(0));
	HTAB	   *answers = (HTAB *) fcinfo->flinfo->fn_extra;
	ReadAnswer *answer;
	bool		found;

	if (reads_every_scope(roleid))
		PG_RETURN_BOOL(true);
	if (answers == NULL)
	{
		answers = fencing_scope_hash_create("fencing read answers", sizeof(ReadAnswer),
											fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = answers;
	}
	answer = hash_search(answers, scope, HASH_ENTER, &found);
	if (!found)
		answer->may = scope_acl_may_read(scope, roleid);
	PG_RETURN_BOOL(answer->may);
}

/*
 * BINDINGS: the scopes a table's rows may name.
 *
 * protect() binds a table to a constant scope only for an owner with the
 * write privilege on it.  A scope column names the scope row by row, so the
 * same rule is checked at the write: a row may name a scope only if the
 * table's owner may write to it.  Without that, a role could create a table
 * of its own with a scope column, write rows naming another application's
 * scope at its mark, and hold that scope's share lock in an open
 * transaction: the scope's next takeover would wait for it, and the
 * rejection of a stale token would tell it the scope's mark.
 *
 * Checked when a transaction first locks a scope for a row of such a table
 * (marks/scope_mark.c: a scope it already holds was admitted before), and
 * the answers are cached per backend, keyed like the mark cache
 * (scope_inval_id) and forgotten by the same messages: a change of the
 * scope's row (its owner), a grant or revoke (the trigger
 * forget_cached_grants on fencing.scope_grants sends the scope's message,
 * whoever writes the row), and any change of roles or role membership
 * (every answer).  A scope that does not exist yet binds: nothing can wait
 * on it, and the write that creates it checks the writer's own privilege.
 */

typedef struct Binding
{
	Oid			inval_id;		/* hash key: the scope's pseudo-OID */
	char		scope[FENCING_SCOPE_MAX_LEN + 1];
	Oid			owner;			/* the table owner the answer is for */
	bool		allowed;
} Binding;

static HTAB *bindings = NULL;
static bool callbacks_registered = false;

/* Bumped by every message; a check that saw it move caches nothing. */
static uint64 binding_inval_counter = 0;

/* A cache this large is dropped rather than grown. */
#define BINDINGS_MAX	10000

static void
drop_bindings(void)
{
	scope_table_drop(&bindings);
}

void
scope_binding_relcache_changed(Oid relid)
{
	Oid			table = fencing_scopes_relid_if_known();

	binding_inval_counter++;
	if (relid == InvalidOid || relid == table || !OidIsValid(table))
		drop_bindings();
	else if (bindings != NULL)
		(void) hash_search(bindings, &relid, HASH_REMOVE, NULL);
}

static void
binding_role_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	binding_inval_counter++;
	drop_bindings();
}

static bool
binds(const char *scope, Oid inval_id, Oid owner)
{
	Binding    *entry;
	ScopeInfo	info;
	uint64		counter = binding_inval_counter;
	bool		allowed;

	if (bindings != NULL)
	{
		entry = hash_search(bindings, &inval_id, HASH_FIND, NULL);
		if (entry != NULL && entry->owner == owner && strcmp(entry->scope, scope) == 0)
			return entry->allowed;
	}
	if (!callbacks_registered)
	{
		CacheRegisterSyscacheCallback(AUTHOID, binding_role_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, binding_role_callback, (Datum) 0);
		callbacks_registered = true;
	}

	allowed = !fencing_sql_at_least(FENCING_SQL_1_2) || !scope_info_read(scope, &info) ||
		scope_acl_has(scope, &info, SCOPE_PRIV_WRITE, owner);

	if (counter != binding_inval_counter)
		return allowed;
	entry = hash_search(scope_table_ready(&bindings, "fencing scope bindings", sizeof(Binding),
										  TopMemoryContext, BINDINGS_MAX),
						&inval_id, HASH_ENTER, NULL);
	strlcpy(entry->scope, scope, sizeof(entry->scope));
	entry->owner = owner;
	entry->allowed = allowed;
	return allowed;
}

static void
require_binding(Relation rel, const char *scope, bool fixed)
{
	Oid			owner = rel->rd_rel->relowner;
	const char *role;

	if (superuser_arg(owner) || binds(scope, scope_inval_id(scope), owner))
		return;
	role = GetUserNameFromId(owner, true);
	if (role == NULL)
		role = psprintf("%u", owner);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for fencing scope \"%s\"", scope),
			 fixed ?
			 errdetail("The fence trigger of table \"%s\" binds it to scope \"%s\"; the table's owner, role \"%s\", does not have the \"write\" privilege on that scope.",
					   RelationGetRelationName(rel), scope, role) :
			 errdetail("A row of table \"%s\" names scope \"%s\" in its scope column; the table's owner, role \"%s\", does not have the \"write\" privilege on that scope.",
					   RelationGetRelationName(rel), scope, role),
			 errhint("The scope's owner can grant it: SELECT fencing.grant_scope(%s, 'write', %s);",
					 quote_literal_cstr(scope), quote_literal_cstr(quote_identifier(role))),
			 errtable(rel)));
}

void
scope_binding_require(Relation rel, const char *scope)
{
	require_binding(rel, scope, false);
}

/*
 * A fixed scope: protect() checked the caller's privilege, but a trigger
 * made otherwise (by a superuser, or restored) is checked too, whoever made
 * it, at its first write after any change a binding depends on.
 */
void
scope_binding_require_fixed(Relation rel, const char *scope)
{
	require_binding(rel, scope, true);
}

uint64
scope_binding_generation(void)
{
	return binding_inval_counter;
}
