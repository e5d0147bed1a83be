/*-------------------------------------------------------------------------
 *
 * fencing.h
 *	  Declarations shared by the modules of the fencing extension.
 *
 * The extension keeps its state in the fixed schema "fencing": the epoch
 * sequence (the clock), the per-scope marks and the history of issued terms.
 * Each module has its own header; this one holds what all of them use.
 *
 * Tested on PostgreSQL 15, 17 and 18 (test/stages/matrix); the differences between
 * their server APIs are in compat.h.
 *
 * Layers.  The folders under src/ are layers, bottom to top; a file includes
 * headers of its own folder and of folders below it, never above
 * (test/stages/check_layers checks it):
 *	 fencing.h, compat.h  what every file shares
 *	 base/        argument checks; backend hash tables keyed by scope
 *	 state/       the extension's own tables: their OIDs, the installed SQL
 *	              version, direct row reads, the one writer of fencing.scopes
 *	 durability/  commits that must be durable
 *	 security/    scope privileges and bindings, the bypass
 *	 telemetry/   rejections (their errors) and the statistics
 *	 marks/       scope marks: locks, the mark cache, takeovers, scope admin
 *	 clock/       the epoch clock, timelines' term bands, failover fencing
 *	 tokens/      tokens declared by use_token()
 *	 leases/      leases
 *	 trigger/     the fence trigger, protect(), the statement it runs in
 *	 legacy/      what older SQL versions call (legacy/older_sql.c)
 *	 fencing.c, end_of_xact.c, relcache_watch.c  the module entry, the
 *	              end-of-transaction dispatcher and the one relcache
 *	              callback, on top of everything
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCING_H
#define FENCING_H

#include "postgres.h"

#include "compat.h"

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
#define ERRCODE_FENCING_CLOCK_UNCONFIRMED	MAKE_SQLSTATE('Z','F','0','0','6')
#define ERRCODE_FENCING_OUT_OF_BAND		MAKE_SQLSTATE('Z','F','0','0','7')

/*
 * Declares a SQL-callable function.  Only these, _PG_init and the magic
 * block are exported from the library (the Makefile hides everything else);
 * each is named fencing_<its SQL name>, so that it collides with nothing of
 * another library loaded into the same server.
 */
#define FENCING_FUNCTION(name) \
	extern PGDLLEXPORT Datum name(PG_FUNCTION_ARGS); \
	PG_FUNCTION_INFO_V1(name)

#endif							/* FENCING_H */
