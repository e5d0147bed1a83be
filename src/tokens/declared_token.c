/*-------------------------------------------------------------------------
 *
 * declared_token.c
 *	  fencing.use_token(): the token a transaction writes with, when its
 *	  statements do not carry one in the token column.
 *
 * Declarations are transaction-scoped on purpose: they vanish at commit or
 * abort (and with a rolled-back savepoint), so they work through poolers in
 * transaction mode and never leak into the next client of a pooled session.
 *
 * Each declaration keeps the role that made it (the current user at the
 * call: inside a SECURITY DEFINER function, its owner).  That role offered
 * the token: a write that carries it raises a mark only if the offering role
 * holds the scope's write privilege too, whoever runs the write (a foreign
 * key's cascade runs as the referencing table's owner).
 *
 *-------------------------------------------------------------------------
 */
#include "base/input_checks.h"
#include "base/scope_tables.h"
#include "tokens/declared_token.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "nodes/pg_list.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/*
 * A declaration, and what it replaced: a savepoint rolled back restores the
 * token the transaction had before it.
 */
typedef struct Declaration
{
	int64		token;
	Oid			role;			/* who declared it: the role offering the token */
	SubTransactionId subid;		/* where it was declared */
} Declaration;

typedef struct DeclaredToken
{
	char		scope[FENCING_SCOPE_MAX_LEN + 1];	/* hash key */
	List	   *stack;			/* of Declaration, newest last */
} DeclaredToken;

/* Per scope, and for every scope; both live in TopTransactionContext. */
static HTAB *scope_tokens = NULL;
static List *all_scopes_stack = NIL;

static void
forget_all(void)
{
	/* the memory goes with TopTransactionContext */
	scope_tokens = NULL;
	all_scopes_stack = NIL;
}

void
declared_token_at_xact_end(void)
{
	forget_all();
}

/*
 * Subtransaction ids grow within a transaction, and the subtransaction being
 * aborted is the newest one still open: whatever was declared at or after it
 * goes with it.
 */
static List *
pop_aborted(List *stack, SubTransactionId aborted)
{
	while (stack != NIL &&
		   ((Declaration *) llast(stack))->subid >= aborted)
		stack = list_delete_last(stack);
	return stack;
}

void
declared_token_at_subxact_abort(SubTransactionId mySubid)
{
	HASH_SEQ_STATUS status;
	DeclaredToken *entry;

	all_scopes_stack = pop_aborted(all_scopes_stack, mySubid);
	if (scope_tokens == NULL)
		return;
	hash_seq_init(&status, scope_tokens);
	while ((entry = hash_seq_search(&status)) != NULL)
		entry->stack = pop_aborted(entry->stack, mySubid);
}

bool
declared_token_lookup(const char *scope, int64 *token)
{
	Oid			role;

	return declared_token_lookup_offerer(scope, token, &role);
}

bool
declared_token_lookup_offerer(const char *scope, int64 *token, Oid *role)
{
	List	   *stack = all_scopes_stack;

	if (scope != NULL && scope_tokens != NULL)
	{
		DeclaredToken *entry = hash_search(scope_tokens, scope, HASH_FIND, NULL);

		if (entry != NULL && entry->stack != NIL)
			stack = entry->stack;
	}
	if (stack == NIL)
		return false;
	*token = ((Declaration *) llast(stack))->token;
	*role = ((Declaration *) llast(stack))->role;
	return true;
}

bool
declared_token_any(void)
{
	HASH_SEQ_STATUS status;
	DeclaredToken *entry;

	if (all_scopes_stack != NIL)
		return true;
	if (scope_tokens == NULL)
		return false;
	hash_seq_init(&status, scope_tokens);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (entry->stack != NIL)
		{
			hash_seq_term(&status);
			return true;
		}
	}
	return false;
}

/* Push a declaration, or replace one made in the same subtransaction. */
static List *
push_declaration(List *stack, int64 token)
{
	SubTransactionId subid = GetCurrentSubTransactionId();
	Declaration *decl;
	MemoryContext old;

	if (stack != NIL && ((Declaration *) llast(stack))->subid == subid)
	{
		((Declaration *) llast(stack))->token = token;
		((Declaration *) llast(stack))->role = GetUserId();
		return stack;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	decl = palloc(sizeof(Declaration));
	decl->token = token;
	decl->role = GetUserId();
	decl->subid = subid;
	stack = lappend(stack, decl);
	MemoryContextSwitchTo(old);
	return stack;
}

static void
declare(const char *scope, int64 token)
{
	DeclaredToken *entry;
	bool		found;

	fencing_check_token(token);
	if (scope == NULL)
	{
		all_scopes_stack = push_declaration(all_scopes_stack, token);
		return;
	}

	fencing_check_scope_name(scope);
	if (scope_tokens == NULL)
		scope_tokens = fencing_scope_hash_create("fencing declared tokens", sizeof(DeclaredToken),
											   TopTransactionContext);
	entry = hash_search(scope_tokens, scope, HASH_ENTER, &found);
	if (!found)
		entry->stack = NIL;
	entry->stack = push_declaration(entry->stack, token);
}

int64
parse_token_string(const char *str)
{
	const char *p = str;
	int			base = 10;
	uint64		value = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
	{
		base = 16;
		p += 2;
	}
	if (*p == '\0')
		goto bad;
	for (; *p; p++)
	{
		int			digit;

		if (*p >= '0' && *p <= '9')
			digit = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			digit = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			digit = *p - 'A' + 10;
		else
			goto bad;
		if (value > ((uint64) PG_INT64_MAX - digit) / base)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("fencing token \"%s\" is out of range", str),
					 errdetail("Tokens are between 0 and " INT64_FORMAT ".",
							   PG_INT64_MAX)));
		value = value * base + digit;
	}
	return (int64) value;

bad:
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid fencing token \"%s\"", str),
			 errdetail("A token is a non-negative integer written in decimal digits, "
					   "or in hexadecimal after \"0x\", with no sign or spaces.")));
	return 0;					/* keep compiler quiet */
}

/* fencing.use_token(scope text, token bigint) */
FENCING_FUNCTION(fencing_use_token);

Datum
fencing_use_token(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fencing scope name must not be null"),
				 errhint("Use fencing.use_token(token) to declare a token for every scope.")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fencing token must not be null")));
	declare(text_to_cstring(PG_GETARG_TEXT_PP(0)), PG_GETARG_INT64(1));
	PG_RETURN_INT64(PG_GETARG_INT64(1));
}

/* fencing.use_token(scope text, token text): tokens carried as strings */
FENCING_FUNCTION(fencing_use_token_text);

Datum
fencing_use_token_text(PG_FUNCTION_ARGS)
{
	int64		token;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fencing scope name must not be null")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fencing token must not be null")));
	token = parse_token_string(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	declare(text_to_cstring(PG_GETARG_TEXT_PP(0)), token);
	PG_RETURN_INT64(token);
}

/* fencing.use_token(token bigint): the token for every scope */
FENCING_FUNCTION(fencing_use_token_all_scopes);

Datum
fencing_use_token_all_scopes(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fencing token must not be null")));
	declare(NULL, PG_GETARG_INT64(0));
	PG_RETURN_INT64(PG_GETARG_INT64(0));
}

/* fencing.declared_token(scope text): what a write to scope would carry */
FENCING_FUNCTION(fencing_declared_token);

Datum
fencing_declared_token(PG_FUNCTION_ARGS)
{
	int64		token;
	char	   *scope = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (declared_token_lookup(scope, &token))
		PG_RETURN_INT64(token);
	PG_RETURN_NULL();
}
