/*-------------------------------------------------------------------------
 *
 * older_sql.c
 *	  What the library keeps for the SQL of older versions (1.0 to 1.3), so
 *	  that a database not yet updated (ALTER EXTENSION fencing UPDATE) keeps
 *	  working with this library, and so that the upgrade chain, which
 *	  installs 1.0 and updates it step by step, can run at all.
 *
 * Two kinds of things live here:
 *
 *	- The C names the older SQL scripts call.  Before 1.4 the SQL functions
 *	  named their C symbols without a prefix ('protect', 'fence_trigger');
 *	  1.4's SQL calls fencing_<name>.  Each old name is a call-through to the
 *	  current function, nothing more: the library's own code never calls
 *	  them, and CREATE FUNCTION of the 1.0 script needs them to exist.
 *	- Three functions that only 1.1 and 1.2's SQL call (check_names,
 *	  check_scope_privilege, count_lease_event): 1.3 does their work in C.
 *
 * Everything else older SQL needs is a branch taken on the installed SQL
 * version, which state/extension_state.c tells (fencing_sql_version()); the
 * branches are (grep FENCING_SQL_):
 *	- 1.0 and 1.1 have no scope owners, grants or token kinds: every role may
 *	  do everything (security/scope_acl.c, marks/scope_admin.c,
 *	  telemetry/rejection.c), the clock is read with
 *	  1.1's statement (clock/epoch_clock.c), a new scope's row is inserted
 *	  without them (state/scope_rows.c);
 *	- 1.0 to 1.3 have no scope ids: a writer locks the scope by its name's
 *	  hash, and holds the registry so that an update waits for it
 *	  (marks/scope_mark.c, marks/scope_lock.c).
 *
 * All of it goes when updating from 1.3 is no longer supported: then the
 * base install script becomes the newest frozen one, this file is deleted,
 * and so are the branches above.
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "miscadmin.h"
#include "utils/builtins.h"

#include "base/input_checks.h"
#include "security/scope_acl.h"
#include "telemetry/rejection.h"

/*
 * An old C name for the current function: the older SQL scripts create
 * their functions with it (AS 'MODULE_PATHNAME', 'old').
 */
#define FENCING_OLD_C_NAME(old, current) \
	extern PGDLLEXPORT Datum current(PG_FUNCTION_ARGS); \
	FENCING_FUNCTION(old); \
	Datum \
	old(PG_FUNCTION_ARGS) \
	{ \
		return current(fcinfo); \
	}

FENCING_OLD_C_NAME(acquire_lease, fencing_acquire_lease)
FENCING_OLD_C_NAME(alter_scope_owner, fencing_alter_scope_owner)
FENCING_OLD_C_NAME(alter_scope_tokens, fencing_alter_scope_tokens)
FENCING_OLD_C_NAME(clock_timeline, fencing_clock_timeline)
FENCING_OLD_C_NAME(committed_mark, fencing_committed_mark)
FENCING_OLD_C_NAME(create_scope, fencing_create_scope)
FENCING_OLD_C_NAME(declared_token, fencing_declared_token)
FENCING_OLD_C_NAME(fence_next_epoch, fencing_fence_next_epoch)
FENCING_OLD_C_NAME(fence_older_timelines, fencing_fence_older_timelines)
FENCING_OLD_C_NAME(fence_trigger, fencing_fence_trigger)
FENCING_OLD_C_NAME(forget_cached_marks, fencing_forget_cached_marks)
FENCING_OLD_C_NAME(grant_scope, fencing_grant_scope)
FENCING_OLD_C_NAME(last_rejection_events, fencing_last_rejection_events)
FENCING_OLD_C_NAME(may_read, fencing_may_read)
FENCING_OLD_C_NAME(protect, fencing_protect)
FENCING_OLD_C_NAME(protect_new_partitions, fencing_protect_new_partitions)
FENCING_OLD_C_NAME(raise_pending, fencing_raise_pending)
FENCING_OLD_C_NAME(release_lease, fencing_release_lease)
FENCING_OLD_C_NAME(renew_lease, fencing_renew_lease)
FENCING_OLD_C_NAME(reset_mark, fencing_reset_mark)
FENCING_OLD_C_NAME(revoke_scope, fencing_revoke_scope)
FENCING_OLD_C_NAME(scope_counters, fencing_scope_counters)
FENCING_OLD_C_NAME(stats_info, fencing_stats_info)
FENCING_OLD_C_NAME(stats_reset, fencing_stats_reset)
FENCING_OLD_C_NAME(table_counters, fencing_table_counters)
FENCING_OLD_C_NAME(takeover, fencing_takeover)
FENCING_OLD_C_NAME(trigger_arguments, fencing_trigger_arguments)
FENCING_OLD_C_NAME(unprotect, fencing_unprotect)
FENCING_OLD_C_NAME(use_token, fencing_use_token)
FENCING_OLD_C_NAME(use_token_all_scopes, fencing_use_token_all_scopes)
FENCING_OLD_C_NAME(use_token_text, fencing_use_token_text)

/*
 * fencing.check_names(scope text, holder text): the lease functions of 1.1
 * and 1.2, written in SQL, check their arguments with it.
 */
FENCING_FUNCTION(check_names);

Datum
check_names(PG_FUNCTION_ARGS)
{
	char	   *scope;
	char	   *holder;

	fencing_check_name_args(fcinfo, &scope, &holder);
	PG_RETURN_VOID();
}

/*
 * fencing.check_scope_privilege(scope text, privilege text, create_tokens
 * text): 1.2's lease functions, SECURITY DEFINER plpgsql, check the role
 * that called them (the outer role: the session's current role), not the
 * definer.  create_tokens NULL: a missing scope passes (the call then
 * changes nothing); 'issued' or 'external': a missing scope is created,
 * owned by that role.
 */
FENCING_FUNCTION(check_scope_privilege);

Datum
check_scope_privilege(PG_FUNCTION_ARGS)
{
	char	   *scope;
	ScopePrivilege priv;
	ScopeMissing missing = SCOPE_MISSING_OK;
	ScopeInfo	info;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("scope and privilege must not be null")));
	scope = text_to_cstring(PG_GETARG_TEXT_PP(0));
	fencing_check_scope_name(scope);
	priv = scope_privilege_from_name(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	if (!PG_ARGISNULL(2))
	{
		char	   *tokens = text_to_cstring(PG_GETARG_TEXT_PP(2));

		if (strcmp(tokens, "external") == 0)
			missing = SCOPE_MISSING_CREATE_EXTERNAL;
		else if (strcmp(tokens, "issued") == 0)
			missing = SCOPE_MISSING_CREATE_ISSUED;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unrecognized fencing scope tokens \"%s\"", tokens),
					 errhint("A scope's tokens are \"issued\" or \"external\".")));
	}
	scope_acl_require(scope, priv, GetOuterUserId(), missing, &info);
	PG_RETURN_VOID();
}

/*
 * fencing.count_lease_event(scope text, event text): 1.2's lease functions,
 * written in SQL, count their events with it: 'grant', 'grant_after_expiry'
 * (a grant that took over an expired lease: a grant and an expiry),
 * 'renewal_refused'.  Counted like the events counted in C: under an
 * existing scope the current role may lead.
 */
FENCING_FUNCTION(count_lease_event);

Datum
count_lease_event(PG_FUNCTION_ARGS)
{
	char	   *scope;
	char	   *event;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("scope and event must not be null")));
	scope = text_to_cstring(PG_GETARG_TEXT_PP(0));
	event = text_to_cstring(PG_GETARG_TEXT_PP(1));
	fencing_check_scope_name(scope);
	if (strcmp(event, "grant") == 0)
		fence_count_scope_event(scope, FENCE_STAT_LEASE_GRANTS, NULL);
	else if (strcmp(event, "grant_after_expiry") == 0)
	{
		fence_count_scope_event(scope, FENCE_STAT_LEASE_GRANTS, NULL);
		fence_count_scope_event(scope, FENCE_STAT_LEASE_EXPIRIES, NULL);
	}
	else if (strcmp(event, "renewal_refused") == 0)
		fence_count_scope_event(scope, FENCE_STAT_RENEWALS_REFUSED, NULL);
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized lease event \"%s\"", event),
				 errhint("A lease event is \"grant\", \"grant_after_expiry\" or \"renewal_refused\".")));
	PG_RETURN_VOID();
}
