/*-------------------------------------------------------------------------
 *
 * citus_errors.c
 *	  A fence's rejection keeps its SQLSTATE through Citus's COPY path.
 *
 * Citus sends rows to shards by COPY when the coordinator runs an
 * INSERT ... SELECT it cannot push down, a COPY, or a multi-row write it
 * repartitions; a worker's error there reaches the coordinator's client as
 * XX000 with the worker's message and DETAIL (Citus's ReportCopyError drops
 * the SQLSTATE).  An application that steps down on ZF001 would not see it.
 *
 * Guarantees:
 *   - An ERROR with SQLSTATE XX000 whose primary message is one of the
 *     fence's rejections, word for word as telemetry/rejection.c raises them
 *     (this library has no translations), is sent to the client with the
 *     rejection's SQLSTATE: ZF001 stale, ZF002 missing, ZF003 not issued or
 *     not known on the node, ZF005 conflicting.  Nothing else changes: the
 *     message and DETAIL are the worker's (the coordinator's log line shows
 *     the ZF SQLSTATE too).
 *   - Every other message costs two integer compares (level, SQLSTATE).
 *   - Installed only where the library is preloaded (the hook must be in
 *     place before a statement fails), and chained to the hook before it.
 *   - PostgreSQL calls emit_log_hook only for messages logged on the server
 *     (log_min_messages at error or below, the default warning): with
 *     log_min_messages above error the XX000 stays.
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "miscadmin.h"
#include "utils/elog.h"

#include "state/citus_errors.h"

static emit_log_hook_type prev_emit_log_hook = NULL;

/* Whether s starts with prefix and, if then is given, goes on to contain it. */
static bool
starts(const char *s, const char *prefix, const char *then)
{
	size_t		len = strlen(prefix);

	return strncmp(s, prefix, len) == 0 && (then == NULL || strstr(s + len, then) != NULL);
}

/* The rejection's SQLSTATE of a fence message, or 0. */
static int
rejection_sqlstate(const char *message)
{
	if (starts(message, "stale fencing token for ", NULL))
		return ERRCODE_FENCING_STALE_TOKEN;
	if (starts(message, "missing fencing token for relation \"", NULL))
		return ERRCODE_FENCING_MISSING_TOKEN;
	if (starts(message, "fencing token ", " was not issued for scope \"") ||
		starts(message, "fencing token ", " is above the mark of scope \"") ||
		(starts(message, "scope \"", "\" is not known on this node of the cluster")))
		return ERRCODE_FENCING_TOKEN_NOT_ISSUED;
	if (starts(message, "fencing token in column \"", "\" disagrees with the declared token for relation \""))
		return ERRCODE_FENCING_TOKEN_CONFLICT;
	return 0;
}

static void
restore_rejection_sqlstate(ErrorData *edata)
{
	if (edata->elevel >= ERROR && edata->sqlerrcode == ERRCODE_INTERNAL_ERROR &&
		edata->message != NULL)
	{
		int			sqlstate = rejection_sqlstate(edata->message);

		if (sqlstate != 0)
			edata->sqlerrcode = sqlstate;
	}
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

void
citus_errors_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = restore_rejection_sqlstate;
}
