/*-------------------------------------------------------------------------
 *
 * durable_commit.h
 *	  Commits that issue a term or raise a mark: flushed, and waiting for a
 *	  synchronous standby, whatever the transaction set.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_COMMIT_H
#define DURABLE_COMMIT_H

#include "fencing.h"

/* Called by end_of_xact.c, in its order. */
extern void durable_commit_before_commit(void);
extern void durable_commit_at_xact_end(void);

/*
 * Make the current transaction's commit durable, whatever the session set:
 * the commit is flushed locally and, when synchronous_standby_names is set,
 * waits for the synchronous standby (synchronous_commit at least "on"),
 * decided at commit time, so no later SET undoes it.
 */
extern void fencing_require_durable_commit(void);

#endif							/* DURABLE_COMMIT_H */
