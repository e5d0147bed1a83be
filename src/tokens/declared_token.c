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
 * On a Citus cluster the writes run in the workers' backends, which cannot
 * see this one's declarations: where Citus is installed, each declaration
 * also sets fencing.declared_tokens (every scope's current token, written
 * out) with SET LOCAL, which Citus repeats on every connection of the
 * transaction (citus.propagate_set_commands = 'local', set for the
 * transaction too).  A backend with no declaration of its own uses what a
 * SET of that setting within the current transaction said, offered by the
 * role that ran the SET (Citus connects as the same role): a session-level
 * SET made earlier (left behind on a pooled connection), a value restored
 * by a savepoint's rollback, or one from before the library was loaded
 * declares nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "base/input_checks.h"
#include "base/scope_tables.h"
#include "tokens/declared_token.h"

#include "access/xact.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "nodes/pg_list.h"
#include "utils/guc.h"
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

/*
 * fencing.declared_tokens, as another node's use_token() set it: entries
 * separated by ",", each "<token>" (every scope) or "<token>:<length>:<scope>"
 * (length in bytes, so that a scope name may hold any character).
 *
 * What counts is not the setting's value but the values SET within this
 * transaction, each with the role that set it and its subtransaction, kept
 * as use_token()'s declarations are: a rolled-back savepoint takes its SETs
 * back, and a value the server restores (at a savepoint's rollback, a
 * function's exit) is no SET.  A SET is told from a restore by its check
 * hook, which only a SET calls.
 */
typedef struct TravelledTokens
{
	char	   *value;			/* "" declares nothing */
	Oid			role;			/* who set it: the role offering the tokens */
	SubTransactionId subid;
} TravelledTokens;

static char *declared_tokens_setting = NULL;
static List *travelled = NIL;	/* of TravelledTokens, newest last */

/* the value a SET is about to assign (its check hook saw it), or NULL */
static char *pending_set = NULL;

/* declared_token_init() is defining the setting: a value now was a placeholder */
static bool defining = false;

static void
forget_all(void)
{
	/* the memory goes with TopTransactionContext */
	scope_tokens = NULL;
	all_scopes_stack = NIL;
	travelled = NIL;
	if (pending_set != NULL)
		pfree(pending_set);
	pending_set = NULL;
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
	while (travelled != NIL &&
		   ((TravelledTokens *) llast(travelled))->subid >= mySubid)
		travelled = list_delete_last(travelled);
	if (pending_set != NULL)
		pfree(pending_set);
	pending_set = NULL;
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

/* Parse the digits at *p (at least one, within bigint); false if there are none. */
static bool
setting_number(const char **p, int64 *value)
{
	const char *start = *p;
	uint64		v = 0;

	while (**p >= '0' && **p <= '9')
	{
		if (v > ((uint64) PG_INT64_MAX - (**p - '0')) / 10)
			return false;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	*value = (int64) v;
	return *p != start;
}

/*
 * The token the setting declares for scope, or with scope NULL for every
 * scope.  A malformed setting declares nothing (*malformed, if given).
 */
static bool
setting_lookup(const char *setting, const char *scope, int64 *token, bool *malformed)
{
	const char *p = setting;
	bool		found = false;
	size_t		scope_len = scope != NULL ? strlen(scope) : 0;

	while (*p != '\0')
	{
		int64		value;
		int64		len;

		if (!setting_number(&p, &value))
			goto bad;
		if (*p == ':')
		{
			p++;
			if (!setting_number(&p, &len) || *p != ':' || len == 0 ||
				len > FENCING_SCOPE_MAX_LEN || strnlen(p + 1, len) < (size_t) len)
				goto bad;
			p++;
			if (scope != NULL && (size_t) len == scope_len && memcmp(p, scope, len) == 0)
			{
				*token = value;
				return true;
			}
			p += len;
		}
		else if (scope == NULL && !found)
		{
			*token = value;
			found = true;
		}
		if (*p == ',' && p[1] != '\0')
			p++;
		else if (*p != '\0')
			goto bad;
	}
	return found;

bad:
	if (malformed != NULL)
		*malformed = true;
	return false;
}

static bool
check_declared_tokens(char **newval, void **extra, GucSource source)
{
	int64		token;
	bool		malformed = false;

	if (*newval != NULL)
		(void) setting_lookup(*newval, "", &token, &malformed);
	if (malformed)
	{
		GUC_check_errdetail("It is set by fencing.use_token() on another node of a Citus cluster: "
							"\"<token>\" for every scope and \"<token>:<length>:<scope>\" for one, "
							"separated by commas.");
		return false;
	}
	/* a SET (or set_config()) in this session, not a file, role or placeholder */
	if (source == PGC_S_SESSION && !defining && *newval != NULL && IsTransactionState())
	{
		if (pending_set != NULL)
			pfree(pending_set);
		pending_set = MemoryContextStrdup(TopTransactionContext, *newval);
	}
	return true;
}

/*
 * The value a SET in a live transaction assigns is that transaction's
 * declaration, offered by the role that set it.  Any other assignment in a
 * live transaction (a RESET, to whatever the reset value is; the value a
 * function's SET clause had hidden, restored when it returns) declares
 * nothing from then on: no role offered that value in this transaction.
 * Outside one (a savepoint's rollback, which takes back its own SETs here
 * first; the transaction's end) and while the library defines the setting
 * (a placeholder, maybe an earlier client's on a pooled connection) an
 * assignment changes nothing.
 */
static void
assign_declared_tokens(const char *newval, void *extra)
{
	TravelledTokens *set;
	MemoryContext old;
	bool		is_set = pending_set != NULL && newval != NULL && strcmp(pending_set, newval) == 0;

	if (pending_set != NULL)
		pfree(pending_set);
	pending_set = NULL;
	if (defining || !IsTransactionState())
		return;
	old = MemoryContextSwitchTo(TopTransactionContext);
	set = palloc(sizeof(TravelledTokens));
	set->value = pstrdup(is_set ? newval : "");
	set->role = GetUserId();
	set->subid = GetCurrentSubTransactionId();
	travelled = lappend(travelled, set);
	MemoryContextSwitchTo(old);
}

void
declared_token_init(void)
{
	defining = true;
	DefineCustomStringVariable("fencing.declared_tokens",
							   "Tokens declared by fencing.use_token() on another node of a Citus cluster, for this transaction.",
							   "Set with SET LOCAL by fencing.use_token() where Citus is installed; Citus repeats it on the workers.",
							   &declared_tokens_setting,
							   "",
							   PGC_USERSET,
							   GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE,
							   check_declared_tokens, assign_declared_tokens, NULL);
	defining = false;
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
	{
		TravelledTokens *set;

		if (likely(travelled == NIL))
			return false;
		/* declared on another node: for the scope, else for every scope */
		set = (TravelledTokens *) llast(travelled);
		*role = set->role;
		return (scope != NULL && setting_lookup(set->value, scope, token, NULL)) ||
			setting_lookup(set->value, NULL, token, NULL);
	}
	*token = ((Declaration *) llast(stack))->token;
	*role = ((Declaration *) llast(stack))->role;
	return true;
}

bool
declared_token_any(void)
{
	HASH_SEQ_STATUS status;
	DeclaredToken *entry;

	if (all_scopes_stack != NIL ||
		(travelled != NIL && ((TravelledTokens *) llast(travelled))->value[0] != '\0'))
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

/*
 * Where Citus is installed, the transaction's declarations also go to the
 * other nodes: every scope's current token, in fencing.declared_tokens, set
 * LOCAL with Citus told to repeat it on each connection of the transaction.
 */
static void
send_to_cluster(void)
{
	StringInfoData value;
	HASH_SEQ_STATUS status;
	DeclaredToken *entry;
	int			rc;

	if (!OidIsValid(get_extension_oid("citus", true)))
		return;
	initStringInfo(&value);
	if (all_scopes_stack != NIL)
		appendStringInfo(&value, INT64_FORMAT, ((Declaration *) llast(all_scopes_stack))->token);
	if (scope_tokens != NULL)
	{
		hash_seq_init(&status, scope_tokens);
		while ((entry = hash_seq_search(&status)) != NULL)
		{
			if (entry->stack == NIL)
				continue;
			appendStringInfo(&value, "%s" INT64_FORMAT ":%zu:%s", value.len > 0 ? "," : "",
							 ((Declaration *) llast(entry->stack))->token,
							 strlen(entry->scope), entry->scope);
		}
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute("SET LOCAL citus.propagate_set_commands TO 'local'", false, 0);
	if (rc >= 0)
		rc = SPI_execute(psprintf("SET LOCAL fencing.declared_tokens TO %s",
								  quote_literal_cstr(value.data)), false, 0);
	if (rc < 0)
		elog(ERROR, "could not set fencing.declared_tokens: %s", SPI_result_code_string(rc));
	SPI_finish();
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
		send_to_cluster();
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
	send_to_cluster();
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
