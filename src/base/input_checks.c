/*-------------------------------------------------------------------------
 *
 * input_checks.c
 *	  Checks of user-supplied values that every module shares: scope names,
 *	  holders, tokens.
 *	  Names and holders are valid text in the database's encoding: stored
 *	  invalid, they would break COPY, pg_dump and every client reading them.
 *
 *-------------------------------------------------------------------------
 */
#include "base/input_checks.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"

/*
 * Scope names are the keys of the marks table and of the scope locks; keep
 * them non-empty and bounded so a typo or a runaway caller fails loudly.
 */
void
fencing_check_scope_name(const char *scope)
{
	size_t		len = strlen(scope);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fencing scope name must not be empty")));
	if (len > FENCING_SCOPE_MAX_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("fencing scope name is too long"),
				 errdetail("The name is %zu bytes long; the limit is %d bytes.",
						   len, FENCING_SCOPE_MAX_LEN)));
	/* a name from bytes (a trigger argument, a C string) may not be text */
	(void) pg_verifymbstr(scope, len, false);
}

/* Holders name who took a term or a lease; bounded like scope names. */
void
fencing_check_holder(const char *holder)
{
	size_t		len = strlen(holder);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("holder must not be empty")));
	if (len > FENCING_HOLDER_MAX_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("holder is too long"),
				 errdetail("The holder is %zu bytes long; the limit is %d bytes.",
						   len, FENCING_HOLDER_MAX_LEN)));
	(void) pg_verifymbstr(holder, len, false);
}

/*
 * The scope name and holder that a lease function takes as its first two
 * arguments, checked: the errors fence_next_epoch() raises.
 */
void
fencing_check_name_args(FunctionCallInfo fcinfo, char **scope, char **holder)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fencing scope name must not be null")));
	*scope = text_to_cstring(PG_GETARG_TEXT_PP(0));
	fencing_check_scope_name(*scope);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("holder must not be null"),
				 errhint("Name the process asking for the lease, uniquely (host, pid, start time).")));
	*holder = text_to_cstring(PG_GETARG_TEXT_PP(1));
	fencing_check_holder(*holder);
}

/* A mark to store: like tokens, non-negative. */
void
fencing_check_mark(const char *scope, int64 mark)
{
	if (mark < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mark must not be negative"),
				 errdetail("Scope \"%s\", mark " INT64_FORMAT ".", scope, mark)));
}

/* Tokens are non-negative: every lock service we know counts up from 0 or 1. */
void
fencing_check_token(int64 token)
{
	if (token < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fencing token must not be negative"),
				 errdetail("The token offered was " INT64_FORMAT ".", token)));
}
