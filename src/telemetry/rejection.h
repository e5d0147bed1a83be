/*-------------------------------------------------------------------------
 *
 * rejection.h
 *	  The fence's rejections (ZF001-ZF007), raised in one place: each is
 *	  counted (only under a scope the write may count under), logged, and
 *	  carries the table's fields when a table was written.
 *
 * Layers: the trigger, takeover() (marks/scope_mark.c) and the clock call
 * in; this module calls down to the scope registry and privileges
 * (security/) and to the counters (telemetry/fence_stats.c), and nothing
 * below it calls up into it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef REJECTION_H
#define REJECTION_H

#include "fencing.h"

#include "utils/relcache.h"

#include "security/scope_acl.h"
#include "telemetry/fence_stats.h"

/*
 * What a rejected write concerns.  rel: the table written, NULL when no
 * table is (takeover()).  scope: the scope the write names, NULL for a
 * table fenced per row only (a table's write names it in its DETAIL even
 * when it does not count under it).  where: the opening of the DETAIL
 * ("Relation "public.t", scope "s""), NULL to have it made from rel and scope.
 */
typedef struct FenceWrite
{
	Relation	rel;
	const char *scope;
	const char *where;
} FenceWrite;

/*
 * ZF001: token below mark (the scope's, or with row_mark the row's).  With
 * skip (policy "skip") the row is counted and logged as skipped and false
 * is returned; otherwise it raises the error.  Its DETAIL names the mark
 * only to a role that offered the token (security/scope_acl.h) and may read
 * it: the scope's read privilege, or SELECT on the row's token column.
 */
extern bool fence_reject_stale(const FenceWrite *w, int64 token, int64 mark,
							   bool row_mark, bool skip);

/* The same for a row's token, stored in rel's column token_attnum. */
extern bool fence_reject_stale_row(const FenceWrite *w, AttrNumber token_attnum,
								   int64 token, int64 row_token, bool skip);

/*
 * ZF003 where marks are a cluster's (state/cluster_marks.h): a write whose
 * token is above its node's mark of the scope, or that names a scope its
 * node does not know (mark -1).  Only the coordinator raises marks and
 * creates scopes, for every node at once.
 */
pg_noreturn extern void fence_reject_above_cluster_mark(const FenceWrite *w, int64 token,
														int64 mark);

/* ZF002: no token; token_column NULL when the table takes declared tokens only. */
pg_noreturn extern void fence_reject_missing(const FenceWrite *w, const char *token_column);

/*
 * ZF002 for an UPDATE moving a row out of w->scope into to_scope: a token was
 * declared for to_scope, none for the scope the row leaves.
 */
pg_noreturn extern void fence_reject_missing_leaving(const FenceWrite *w,
										 const char *to_scope);

/*
 * ZF002: the token column was filled by a DEFAULT of the view written
 * through (view), not by the statement, and no token was declared.
 */
pg_noreturn extern void fence_reject_view_default(const FenceWrite *w, const char *token_column,
									  Oid view);

/* ZF003: an 'issued' scope's mark would rise to a token never issued for it. */
pg_noreturn extern void fence_reject_not_issued(const FenceWrite *w, int64 token,
									int64 latest_term);

/* ZF004: the scope has no term left (mark or latest term is the largest bigint). */
pg_noreturn extern void fence_reject_no_term_left(const char *scope, int64 mark,
									  int64 latest_term);

/* ZF004: the timeline has no band of terms in the clock's generation. */
pg_noreturn extern void fence_reject_no_band(int64 timeline, int64 generation, int64 bands);

/* ZF006: the clock awaits an operator's confirmation (fencing.confirm_clock()). */
pg_noreturn extern void fence_reject_clock_unconfirmed(int64 timeline, const char *why, const char *setting);

/*
 * ZF007: the scope's next term would be at or above the limit of the band
 * [term_floor, term_limit) of timeline "timeline" (its mark or latest term,
 * -1 for none, is term_limit - 1 or more); issued: tokens = 'issued'.
 */
pg_noreturn extern void fence_reject_out_of_band(const char *scope, bool issued, int64 mark,
									 int64 latest_term, int64 timeline,
									 int64 term_floor, int64 term_limit);

/*
 * ZF007: the shared sequence fencing.epoch_seq returned "value", at or
 * above the band's limit; legacy: the SQL is older than 1.2 (terms unique
 * across scopes by the sequence).
 */
pg_noreturn extern void fence_reject_sequence_out_of_band(int64 value, int64 timeline,
											  int64 term_floor, int64 term_limit,
											  bool legacy);

/* ZF005: the token column disagrees with the declared token. */
pg_noreturn extern void fence_reject_conflict(const FenceWrite *w, const char *token_column,
								  int64 column, int64 declared);

/* A write let through by fencing.bypass: counted like a rejection of it. */
extern void fence_count_bypass(Relation rel, const char *scope);

/*
 * A scope event without a table: a term issued, a lease granted, expired or
 * its renewal refused.  Counted under an existing scope whose lead
 * privilege the current role holds; known: the scope's row as the caller
 * read it after checking that privilege, or NULL to read and check it here.
 */
extern void fence_count_scope_event(const char *scope, FenceStatKind kind,
									const ScopeInfo *known);

#endif							/* REJECTION_H */
