/*-------------------------------------------------------------------------
 *
 * scope_binding.c
 *	  Which scopes a table with a scope column may write to: those its owner
 *	  holds the write privilege on, checked before any scope lock.
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
 * (every answer).  A scope that does not exist yet binds: nothing can wait on it,
 * and the write that creates it checks the writer's own privilege.
 *
 *-------------------------------------------------------------------------
 */
#include "security/scope_binding.h"

#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "base/scope_tables.h"
#include "security/scope_acl.h"

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
	entry = scope_table_enter(&bindings, "fencing scope bindings", sizeof(Binding),
							  TopMemoryContext, BINDINGS_MAX, inval_id);
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
