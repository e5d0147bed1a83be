/*-------------------------------------------------------------------------
 *
 * fence_stats.h
 *	  Telemetry: shared-memory counters of rejections, skips, bypasses,
 *	  terms and lease events, per scope and per protected table, and the
 *	  log lines of rejections and skips.
 *
 * Every entry point here is called on a rare path only (a rejection, a
 * skipped row, a bypassed write, a term, a lease event): an accepted write
 * never reaches this module.  Who may count under which scope is decided
 * above it, in telemetry/rejection.c; this file keeps the counters, bounds
 * them per role and validates the names it keeps.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCE_STATS_H
#define FENCE_STATS_H

#include "fencing.h"

/*
 * What is counted.  The first FENCE_STAT_NUM_KINDS are the kinds of
 * rejection; each keeps its last occurrence (when, token, mark, role,
 * application, client).
 */
typedef enum FenceStatKind
{
	FENCE_STAT_STALE = 0,		/* ZF001, policy error */
	FENCE_STAT_MISSING,			/* ZF002 */
	FENCE_STAT_NOT_ISSUED,		/* ZF003 */
	FENCE_STAT_CONFLICT,		/* ZF005 */
	FENCE_STAT_SKIPPED,			/* ZF001 under policy skip: row left out */
	FENCE_STAT_BYPASSED,		/* written under fencing.bypass */
	FENCE_STAT_TERMS,			/* terms issued (fence_next_epoch) */
	FENCE_STAT_LEASE_GRANTS,	/* leases granted with a new term */
	FENCE_STAT_RENEWALS_REFUSED,	/* renew_lease answered renewed = false */
	FENCE_STAT_LEASE_EXPIRIES,	/* an acquire took over an expired lease */
	FENCE_STAT_NUM
} FenceStatKind;

#define FENCE_STAT_NUM_KINDS	(FENCE_STAT_SKIPPED + 1)

/* Settings and, when preloaded, the shared-memory hooks; from _PG_init. */
extern void fence_stats_init(void);

/* Whether counters live in shared memory (fencing was preloaded). */
extern bool fence_stats_collected(void);

/*
 * A database was created with this OID (relcache_watch.c): the counters of
 * a database dropped before under the same OID are not its own.
 */
extern void fence_stats_database_created(Oid dbid);

/*
 * Count an event for the relation and for the scope (either may be absent:
 * InvalidOid, NULL), and for a kind of rejection remember it as the last of
 * its kind, with the current role, application_name and client address.
 * This file does not judge rights: the caller (telemetry/rejection.c) passes
 * only a scope that exists and that the writer may count under, and names
 * the role each entry is charged to when it has to be created (the table's
 * owner, the scope's owner).  A role other than a superuser holds at most
 * fencing.stats_max_per_role entries; a scope name that is not valid in the
 * database encoding, or too long, is never a key.  Never raises an error;
 * call it before the ereport(ERROR): the counters are not transactional, so
 * they survive the rejected transaction.  token/mark/declared < 0: not known.
 */
extern void fence_stats_count(FenceStatKind kind, Oid relid, Oid rel_owner,
							  const char *scope, Oid scope_owner,
							  int64 token, int64 mark, int64 declared);

/* The level of a kind's log line: fencing.log_rejections or fencing.log_skips (0: off). */
extern int	fence_stats_log_level(FenceStatKind kind);

/* The SQLSTATE of a kind of rejection, as text. */
extern const char *fence_stats_kind_sqlstate(FenceStatKind kind);

/* Whether a scope name can be a key: 1..FENCING_SCOPE_MAX_LEN bytes, valid in the database encoding. */
extern bool fence_stats_scope_name_ok(const char *scope);

/* The client's address as pg_stat_activity shows it, "" for none. */
extern void fence_stats_client_address(char *buf, size_t len);

#endif							/* FENCE_STATS_H */
