/*-------------------------------------------------------------------------
 *
 * fencing.h
 *	  Declarations shared by the modules of the fencing extension.
 *
 * The extension keeps its state in the fixed schema "fencing": the epoch
 * sequence (the clock), the per-scope marks and the history of issued terms.
 * Each module has its own header; this one holds what all of them use.
 *
 * Tested on PostgreSQL 15, 17 and 18 (test/matrix); the differences between
 * their server APIs are in compat.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCING_H
#define FENCING_H

#include "postgres.h"

#include "compat.h"

#include "access/xact.h"
#include "fmgr.h"
#include "utils/elog.h"
#include "utils/hsearch.h"

/* Schema that holds every object of the extension. */
#define FENCING_SCHEMA			"fencing"

/* A scope name is 1..FENCING_SCOPE_MAX_LEN bytes, a holder likewise. */
#define FENCING_SCOPE_MAX_LEN	200
#define FENCING_HOLDER_MAX_LEN	200

/*
 * SQLSTATEs of our own, in class "ZF" (implementation-defined range, unused
 * by PostgreSQL core), so that clients can catch a fencing rejection.
 */
#define ERRCODE_FENCING_STALE_TOKEN		MAKE_SQLSTATE('Z','F','0','0','1')
#define ERRCODE_FENCING_MISSING_TOKEN	MAKE_SQLSTATE('Z','F','0','0','2')
#define ERRCODE_FENCING_TOKEN_NOT_ISSUED	MAKE_SQLSTATE('Z','F','0','0','3')
#define ERRCODE_FENCING_CLOCK_EXHAUSTED	MAKE_SQLSTATE('Z','F','0','0','4')
#define ERRCODE_FENCING_TOKEN_CONFLICT	MAKE_SQLSTATE('Z','F','0','0','5')

/*
 * Whether a transaction callback's event ends the transaction (commit,
 * abort, prepare, parallel or not): where per-transaction state goes.
 */
static inline bool
fencing_xact_ended(XactEvent event)
{
	return event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE;
}

#endif							/* FENCING_H */
