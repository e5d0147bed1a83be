/*-------------------------------------------------------------------------
 *
 * end_of_xact.c
 *	  The library's one transaction callback and one subtransaction
 *	  callback: every module's per-transaction state is reset here, in a
 *	  fixed order, as Postgres's own AtEOXact_* sequence does.
 *
 * Before a commit or a PREPARE TRANSACTION: a Citus worker's feed lease is
 * judged again for a transaction that wrote by scope under it (one that ran
 * out meanwhile fails it); durability acts (the commit of a
 * transaction that issued a term or raised a mark is made durable); before a
 * PREPARE, first the scopes held by registration take their locks.
 *
 * When a transaction ends (commit, abort, prepare), from the top of the
 * layers down:
 *	1. trigger/running_statement: the statements in flight (none survive);
 *	2. tokens/declared_token: the tokens declared with use_token();
 *	3. marks/scope_mark: the scopes held, their locks' count, deferred raises;
 *	4. marks/mark_cache: the read in flight;
 *	5. security/scope_acl: the role that offered a token;
 *	6. durability/durable_commit: the request for a durable commit;
 *	7. state/scope_rows: the count of invalidations sent;
 *	8. state/citus_shards: the note of a write under a feed lease.
 * No reset reads another module's state, so any fixed order is correct;
 * this one goes from the top of the layers down (fencing.h).
 *
 * When a subtransaction aborts (ROLLBACK TO SAVEPOINT, an exception block):
 * the tokens declared in it, the scopes it locked or raised, and the offerer
 * go with it, in that order; its commit hands everything to its parent, so
 * nothing is done then.
 *
 *-------------------------------------------------------------------------
 */
#include "end_of_xact.h"

#include "access/xact.h"

#include "durability/durable_commit.h"
#include "marks/mark_cache.h"
#include "marks/scope_mark.h"
#include "security/scope_acl.h"
#include "state/citus_shards.h"
#include "state/scope_rows.h"
#include "tokens/declared_token.h"
#include "trigger/restored_fence.h"
#include "trigger/running_statement.h"

static void
fencing_xact_callback(XactEvent event, void *arg)
{
	/* a claim it inserted may be gone with it (or later, if prepared) */
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		restored_fence_at_abort();
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			citus_node_lease_before_commit();
			durable_commit_before_commit();
			break;
		case XACT_EVENT_PRE_PREPARE:
			citus_node_lease_before_commit();
			scope_mark_before_prepare();
			durable_commit_before_commit();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			running_statement_at_xact_end();
			declared_token_at_xact_end();
			scope_mark_at_xact_end();
			mark_cache_at_xact_end();
			scope_acl_at_xact_end();
			durable_commit_at_xact_end();
			scope_rows_at_xact_end();
			citus_node_lease_at_xact_end();
			break;
		default:
			break;
	}
}

static void
fencing_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	declared_token_at_subxact_abort(mySubid);
	scope_mark_at_subxact_abort(mySubid);
	scope_acl_at_subxact_abort();
	restored_fence_at_abort();
}

void
end_of_xact_init(void)
{
	RegisterXactCallback(fencing_xact_callback, NULL);
	RegisterSubXactCallback(fencing_subxact_callback, NULL);
}
