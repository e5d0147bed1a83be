/*-------------------------------------------------------------------------
 *
 * fence_stats.h
 *	  Telemetry: shared-memory counters of rejections, skips, bypasses,
 *	  terms and lease events, per scope and per protected table, and the
 *	  log lines of rejections and skips.
 *
 * Every entry point here is called on a rare path only (a rejection, a
 * skipped row, a bypassed write, a term, a lease event): an accepted write
 * never reaches this module.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCE_STATS_H
#define FENCE_STATS_H

#include "fencing.h"

#include "utils/relcache.h"

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

/*
 * A write was rejected (or, FENCE_STAT_SKIPPED, left out): count it for the
 * relation and the scope (either may be absent), remember it as the last of
 * its kind, and log it at fencing.log_rejections (fencing.log_skips).  Call
 * it before the ereport(ERROR): the counters are not transactional, so they
 * survive the rejected transaction.  token/mark < 0: not known.
 */
extern void fence_stats_reject(FenceStatKind kind, Relation rel, const char *scope,
							   int64 token, int64 mark, int64 declared);

/* A write let through by fencing.bypass. */
extern void fence_stats_bypass(Relation rel, const char *scope);

/* Scope events without a relation: terms issued, lease events. */
extern void fence_stats_count_scope(const char *scope, FenceStatKind kind);

/*
 * The relation whose fence trigger runs: ZF003 is raised where the term is
 * checked, below the trigger, which does not pass the relation down.
 */
extern PGDLLIMPORT Oid fence_stats_relid;

#endif							/* FENCE_STATS_H */
