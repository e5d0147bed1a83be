/*-------------------------------------------------------------------------
 *
 * durable_commit.c
 *	  Commits that issue a term or raise a mark are durable, decided at
 *	  commit time.
 *
 * A term handed to a client, or a mark raised, must survive a crash and a
 * failover to the synchronous standby.  Two things make a commit so:
 *
 *   - a local WAL flush: ForceSyncCommit() sets a flag that only the start
 *     of the next transaction clears, so calling it when the term is issued
 *     is enough;
 *   - the wait for the synchronous standby: RecordTransactionCommit() waits
 *     only when synchronous_commit is above "local" at that moment, and the
 *     kind of wait follows the setting's assign hook.  A setting made when
 *     the term is issued does not last: a function's SET clause, or a later
 *     SET LOCAL, replaces it before commit.
 *
 * So the decision is taken at XACT_EVENT_PRE_COMMIT (and PRE_PREPARE), the
 * last moment user code has run and before the commit record is written:
 * if the transaction asked for a durable commit, synchronous_commit is set
 * to "on" (unless it already waits for at least a remote flush) with
 * GUC_ACTION_LOCAL, through set_config_option() so the assign hook chooses
 * the wait.  The transaction's GUC state is popped only after the commit
 * record is written and waited for (AtEOXact_GUC follows
 * RecordTransactionCommit in CommitTransaction), so the session's own
 * setting comes back afterwards.
 *
 * Not covered: COMMIT PREPARED of a transaction prepared here is a new
 * command of some later session and waits as that session's setting says
 * (the PREPARE itself is flushed and waited for).
 *
 *-------------------------------------------------------------------------
 */
#include "durability/durable_commit.h"

#include "access/xact.h"
#include "replication/syncrep.h"
#include "utils/guc.h"

/* This transaction issued a term or raised a mark. */
static bool durable_requested = false;

static void
enforce_durable_commit(void)
{
	ForceSyncCommit();
	if (synchronous_commit < SYNCHRONOUS_COMMIT_REMOTE_FLUSH)
		(void) set_config_option("synchronous_commit", "on",
								 PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_LOCAL, true, ERROR, false);
}

void
durable_commit_before_commit(void)
{
	if (durable_requested)
		enforce_durable_commit();
}

void
durable_commit_at_xact_end(void)
{
	durable_requested = false;
}

void
fencing_require_durable_commit(void)
{
	/* the flush flag lasts until the transaction ends: set it now */
	ForceSyncCommit();
	durable_requested = true;
}
