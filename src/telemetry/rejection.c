/*-------------------------------------------------------------------------
 *
 * rejection.c
 *	  The fence's rejections, ZF001 to ZF007, raised in one place: each is
 *	  authorized, then counted, logged, and raised with the table's fields.
 *
 * Guarantees:
 *   - A rejection is counted under the scope it names only when that scope
 *     exists and the write may count under it: for a table written, the
 *     table's owner holds the write privilege on the scope (the table is
 *     bound to it, as security/scope_acl.c requires of a scope column);
 *     with no table (takeover()), the current role holds it.  Otherwise it
 *     is counted under the table only (and the log line says why not under
 *     the scope), so no role can raise another tenant's counters or rewrite
 *     its last rejections by naming its scope in a table of its own.  Scope
 *     events (terms, lease grants, expiries, refused renewals) likewise count
 *     only under an existing scope whose lead privilege the role holds: a
 *     renewal of a scope that does not exist counts nowhere.
 *   - Each rejection names the table it concerns, or none: the relation is
 *     passed in by the caller (never remembered from an earlier write), is
 *     counted and logged with the rejection, and its schema and table fields
 *     are attached to the error (errtable), ZF003 included.
 *   - The counters (telemetry/fence_stats.c) charge each new entry to the
 *     owner of what it counts and bound each role's share.
 *   - A write on a Citus shard is counted, logged and reported under its
 *     distributed table (state/citus_shards.h): "jobs", not "jobs_102041".
 *   - A stale write's DETAIL names the mark only to the role that offered
 *     the token (security/scope_acl.h) when it may read it: the scope's
 *     read privilege, or SELECT on the row's token column.  A stranger's
 *     token in a foreign key's cascade learns no mark it could not read.
 *
 * A rejection is counted and logged before its ereport(ERROR): the counters
 * are not transactional and survive the rolled-back transaction.  ZF004 (no
 * term left), ZF006 and ZF007 (no term left in the band) are no write's
 * rejections: they are raised here, not counted.
 *
 *-------------------------------------------------------------------------
 */
#include "telemetry/rejection.h"

#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "base/input_checks.h"
#include "state/citus_shards.h"

/* the log line's words for each kind: a table written, and no table */
static const char *const kind_what[FENCE_STAT_NUM_KINDS] = {
	"rejected a stale write",
	"rejected a write without a token",
	"rejected a token that was not issued",
	"rejected a token that disagrees with the declared one",
	"skipped a stale write"
};
static const char *const kind_what_no_table[FENCE_STAT_NUM_KINDS] = {
	"rejected a stale token",
	"rejected a missing token",
	"rejected a token that was not issued",
	"rejected a token that disagrees with the declared one",
	"skipped a stale token"
};
static const int kind_errcodes[FENCE_STAT_NUM_KINDS] = {
	ERRCODE_FENCING_STALE_TOKEN,
	ERRCODE_FENCING_MISSING_TOKEN,
	ERRCODE_FENCING_TOKEN_NOT_ISSUED,
	ERRCODE_FENCING_TOKEN_CONFLICT,
	ERRCODE_FENCING_STALE_TOKEN
};

static const char *
role_name(Oid roleid)
{
	const char *name = GetUserNameFromId(roleid, true);

	return name != NULL ? name : psprintf("%u", roleid);
}

/*
 * Whether an event naming scope may be counted under it: NULL if so (with
 * *owner, the scope's owner), else why not.  The authority is the owner of
 * rel when a table was written, else the current role; known: the scope's
 * row, read by a caller that checked the privilege itself.
 */
static const char *
uncounted_reason(const char *scope, Relation rel, ScopePrivilege priv,
				 const ScopeInfo *known, Oid *owner)
{
	ScopeInfo	info;
	Oid			authority;

	*owner = InvalidOid;
	if (!fence_stats_scope_name_ok(scope))
		return "not a valid scope name";
	if (known != NULL && known->exists)
	{
		*owner = known->owner;
		return NULL;
	}
	if (!scope_info_read(scope, &info))
		return "no such scope";
	*owner = info.owner;
	if (!fencing_sql_at_least(FENCING_SQL_1_2))
		return NULL;			/* 1.1's schema: no privileges yet */
	authority = rel != NULL ? rel->rd_rel->relowner : GetUserId();
	if (scope_acl_has(scope, &info, priv, authority))
		return NULL;
	if (rel != NULL)
		return psprintf("the table's owner, role \"%s\", may not write to it",
						role_name(authority));
	return psprintf("role \"%s\" has no \"%s\" privilege on it",
					role_name(authority), scope_privilege_name(priv));
}

static const char *
number_or(int64 n, const char *none)
{
	return n < 0 ? none : psprintf(INT64_FORMAT, n);
}

/*
 * Count a rejection (or a skipped row) for its table and, if it may count
 * there, its scope, and log it at fencing.log_rejections/log_skips.
 */
static void
note(FenceStatKind kind, const FenceWrite *w, int64 token, int64 mark, int64 declared)
{
	int			level = fence_stats_log_level(kind);
	const char *reason = NULL;
	const char *scope_text;
	Oid			scope_owner = InvalidOid;
	Oid			relid = w->rel != NULL ? citus_shown_relid(w->rel) : InvalidOid;
	char		client[64];
	const char *role;

	Assert(kind < FENCE_STAT_NUM_KINDS);
	if (level == 0 && !fence_stats_collected())
		return;
	if (w->scope != NULL)
		reason = uncounted_reason(w->scope, w->rel, SCOPE_PRIV_WRITE, NULL, &scope_owner);

	fence_stats_count(kind, relid, w->rel != NULL ? w->rel->rd_rel->relowner : InvalidOid,
					  reason == NULL ? w->scope : NULL, scope_owner,
					  token, mark, declared);
	if (level == 0)
		return;

	if (w->scope == NULL)
		scope_text = "none";
	else if (!fence_stats_scope_name_ok(w->scope))
		scope_text = "(not a valid name)";
	else if (reason != NULL)
		scope_text = psprintf("\"%s\" (not counted for the scope: %s)", w->scope, reason);
	else
		scope_text = psprintf("\"%s\"", w->scope);
	role = GetUserNameFromId(GetUserId(), true);
	fence_stats_client_address(client, sizeof(client));
	ereport(level,
			(errcode(kind_errcodes[kind]),
			 w->rel != NULL ?
			 errmsg("fencing %s (%s) to relation \"%s\": scope %s, token %s%s, mark %s, "
					"role \"%s\", application \"%s\", client %s",
					kind_what[kind], fence_stats_kind_sqlstate(kind),
					citus_shown_relname(w->rel), scope_text,
					number_or(token, "none"),
					declared >= 0 ? psprintf(" (declared " INT64_FORMAT ")", declared) : "",
					number_or(mark, "unknown"),
					role != NULL ? role : "", application_name != NULL ? application_name : "",
					client[0] != '\0' ? client : "none") :
			 errmsg("fencing %s (%s), no relation: scope %s, token %s%s, mark %s, "
					"role \"%s\", application \"%s\", client %s",
					kind_what_no_table[kind], fence_stats_kind_sqlstate(kind),
					scope_text,
					number_or(token, "none"),
					declared >= 0 ? psprintf(" (declared " INT64_FORMAT ")", declared) : "",
					number_or(mark, "unknown"),
					role != NULL ? role : "", application_name != NULL ? application_name : "",
					client[0] != '\0' ? client : "none"),
			 errhidestmt(true)));
}

/* The opening of the DETAIL: the caller's, or "Relation "public.t", scope "s"". */
static const char *
where(const FenceWrite *w)
{
	if (w->where != NULL)
		return w->where;
	if (w->rel == NULL)
		return psprintf("Scope \"%s\"", w->scope != NULL ? w->scope : "");
	return psprintf("Relation \"%s.%s\"%s",
					get_namespace_name(RelationGetNamespace(w->rel)),
					citus_shown_relname(w->rel),
					w->scope != NULL ? psprintf(", scope \"%s\"", w->scope) : "");
}

/*
 * errtable() naming the table shown (a Citus shard's distributed table);
 * nothing when no table was written.
 */
static int
table_fields(const FenceWrite *w)
{
	if (w->rel == NULL)
		return 0;
	err_generic_string(PG_DIAG_SCHEMA_NAME,
					   get_namespace_name(RelationGetNamespace(w->rel)));
	return err_generic_string(PG_DIAG_TABLE_NAME, citus_shown_relname(w->rel));
}

/*
 * Whether the role that offered a stale token may learn the mark that
 * rejected it: a scope's mark if it may read the scope (as through
 * fencing.committed_mark()), a row's token if it may select the token
 * column.  Asked only on the way to an error.
 */
static bool
offerer_may_see(const FenceWrite *w, bool row_mark, AttrNumber token_attnum, Oid offerer)
{
	Oid			relid = RelationGetRelid(w->rel);

	if (!row_mark)
		return w->scope == NULL || !fencing_sql_at_least(FENCING_SQL_1_2) ||
			scope_acl_may_read(w->scope, offerer);
	if (pg_class_aclcheck(relid, offerer, ACL_SELECT) == ACLCHECK_OK)
		return true;
	return token_attnum > 0 &&
		pg_attribute_aclcheck(relid, token_attnum, offerer, ACL_SELECT) == ACLCHECK_OK;
}

static bool reject_stale(const FenceWrite *w, AttrNumber token_attnum, int64 token,
						 int64 mark, bool row_mark, bool skip);

bool
fence_reject_stale(const FenceWrite *w, int64 token, int64 mark, bool row_mark, bool skip)
{
	return reject_stale(w, 0, token, mark, row_mark, skip);
}

bool
fence_reject_stale_row(const FenceWrite *w, AttrNumber token_attnum, int64 token,
					   int64 row_token, bool skip)
{
	return reject_stale(w, token_attnum, token, row_token, true, skip);
}

static bool
reject_stale(const FenceWrite *w, AttrNumber token_attnum, int64 token, int64 mark,
			 bool row_mark, bool skip)
{
	Oid			offerer;

	if (skip)
	{
		/* counted and logged at fencing.log_skips; the row is left out */
		note(FENCE_STAT_SKIPPED, w, token, mark, -1);
		return false;
	}
	note(FENCE_STAT_STALE, w, token, mark, -1);
	if (w->rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FENCING_STALE_TOKEN),
				 errmsg("stale fencing token for scope \"%s\"", w->scope),
				 errdetail("%s: token " INT64_FORMAT " is below the scope's mark " INT64_FORMAT ".",
						   where(w), token, mark),
				 errhint("A holder with a newer token has taken over: stop writing.")));
	offerer = scope_acl_offerer();
	if (!offerer_may_see(w, row_mark, token_attnum, offerer))
		ereport(ERROR,
				(errcode(ERRCODE_FENCING_STALE_TOKEN),
				 errmsg("stale fencing token for relation \"%s\"",
						citus_shown_relname(w->rel)),
				 errdetail("%s: token " INT64_FORMAT " is below the %s (not shown: role \"%s\", which offered the token, may not read it).",
						   where(w), token, row_mark ? "row's token" : "scope's mark",
						   role_name(offerer)),
				 errhint("A newer term has been issued; the writer holding token " INT64_FORMAT
						 " is no longer the leader and must stop writing.", token),
				 table_fields(w)));
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_STALE_TOKEN),
			 errmsg("stale fencing token for relation \"%s\"",
					citus_shown_relname(w->rel)),
			 row_mark ?
			 errdetail("%s: token " INT64_FORMAT " is below the row's token " INT64_FORMAT ".",
					   where(w), token, mark) :
			 errdetail("%s: token " INT64_FORMAT " is below the scope's mark " INT64_FORMAT ".",
					   where(w), token, mark),
			 errhint("A newer term has been issued; the writer holding token " INT64_FORMAT
					 " is no longer the leader and must stop writing.", token),
			 table_fields(w)));
	return false;				/* keep compiler quiet */
}

void
fence_reject_missing(const FenceWrite *w, const char *token_column)
{
	const char *declare = w->scope == NULL ? "fencing.use_token(token)" :
		psprintf("fencing.use_token(%s, token)", quote_literal_cstr(w->scope));

	Assert(w->rel != NULL);
	note(FENCE_STAT_MISSING, w, -1, -1, -1);
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_MISSING_TOKEN),
			 errmsg("missing fencing token for relation \"%s\"",
					citus_shown_relname(w->rel)),
			 token_column == NULL ?
			 errdetail("%s: the transaction declared no token, and the table takes declared tokens only.",
					   where(w)) :
			 errdetail("%s: the statement did not assign column \"%s\" "
					   "and the transaction declared no token.",
					   where(w), token_column),
			 token_column == NULL ?
			 errhint("Call %s in this transaction.", declare) :
			 errhint("Assign column \"%s\", or call %s in this transaction.",
					 token_column, declare),
			 table_fields(w)));
	pg_unreachable();
}

void
fence_reject_missing_leaving(const FenceWrite *w, const char *to_scope)
{
	Assert(w->rel != NULL && w->scope != NULL);
	note(FENCE_STAT_MISSING, w, -1, -1, -1);
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_MISSING_TOKEN),
			 errmsg("missing fencing token for relation \"%s\"",
					citus_shown_relname(w->rel)),
			 errdetail("%s: the row moves to scope \"%s\", and the transaction declared a token for that scope but none for scope \"%s\", which the row leaves.",
					   where(w), to_scope, w->scope),
			 errhint("A row leaves a scope only with that scope's token: call fencing.use_token(%s, token) in this transaction.",
					 quote_literal_cstr(w->scope)),
			 table_fields(w)));
	pg_unreachable();
}

void
fence_reject_view_default(const FenceWrite *w, const char *token_column, Oid view)
{
	const char *declare = w->scope == NULL ? "fencing.use_token(token)" :
		psprintf("fencing.use_token(%s, token)", quote_literal_cstr(w->scope));
	char	   *view_name = get_rel_name(view);
	char	   *view_nsp = get_namespace_name(get_rel_namespace(view));

	Assert(w->rel != NULL);
	note(FENCE_STAT_MISSING, w, -1, -1, -1);
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_MISSING_TOKEN),
			 errmsg("missing fencing token for relation \"%s\"",
					citus_shown_relname(w->rel)),
			 errdetail("%s: the statement writes through view \"%s.%s\", whose DEFAULT for column \"%s\" "
					   "may have supplied the token, and the transaction declared no token.",
					   where(w), view_nsp ? view_nsp : "?", view_name ? view_name : "?", token_column),
			 errhint("Drop the view column's DEFAULT (ALTER VIEW ... ALTER COLUMN ... DROP DEFAULT), "
					 "or call %s in this transaction.", declare),
			 table_fields(w)));
	pg_unreachable();
}

void
fence_reject_not_issued(const FenceWrite *w, int64 token, int64 latest_term)
{
	note(FENCE_STAT_NOT_ISSUED, w, token, -1, -1);
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_TOKEN_NOT_ISSUED),
			 errmsg("fencing token " INT64_FORMAT " was not issued for scope \"%s\"",
					token, w->scope),
			 latest_term >= 0 ?
			 errdetail("Scope \"%s\" admits only terms issued for it; its latest term is " INT64_FORMAT ".",
					   w->scope, latest_term) :
			 errdetail("Scope \"%s\" admits only terms issued for it; none has been issued yet.",
					   w->scope),
			 errhint("Take a term with fencing.fence_next_epoch(%s) or a lease; a scope fed by an external lock service is created with fencing.create_scope(%s, tokens => 'external').",
					 quote_literal_cstr(w->scope), quote_literal_cstr(w->scope)),
			 table_fields(w)));
	pg_unreachable();
}

void
fence_reject_above_cluster_mark(const FenceWrite *w, int64 token, int64 mark)
{
	note(FENCE_STAT_NOT_ISSUED, w, token, mark, -1);
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_TOKEN_NOT_ISSUED),
			 mark < 0 ?
			 errmsg("scope \"%s\" is not known on this node of the cluster", w->scope) :
			 errmsg("fencing token " INT64_FORMAT " is above the mark of scope \"%s\" on this node of the cluster",
					token, w->scope),
			 errdetail("%s, token " INT64_FORMAT ": on a cluster whose marks are distributed "
					   "(fencing.cluster_marks), a write never creates a scope or raises its mark; "
					   "the coordinator does, on every node.", where(w), token),
			 mark < 0 ?
			 errhint("Create the scope on the coordinator (fencing.fence_next_epoch(%s), fencing.takeover(%s, " INT64_FORMAT "), a lease); "
					 "if it exists there, this node has not had the marks yet: run SELECT fencing.distribute_marks() on the coordinator.",
					 quote_literal_cstr(w->scope), quote_literal_cstr(w->scope), token) :
			 errhint("Raise the mark on the coordinator first: fencing.fence_next_epoch(%s), "
					 "fencing.takeover(%s, " INT64_FORMAT ") or a lease.",
					 quote_literal_cstr(w->scope), quote_literal_cstr(w->scope), token),
			 table_fields(w)));
	pg_unreachable();
}

void
fence_reject_conflict(const FenceWrite *w, const char *token_column, int64 column, int64 declared)
{
	Assert(w->rel != NULL);
	note(FENCE_STAT_CONFLICT, w, column, -1, declared);
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_TOKEN_CONFLICT),
			 errmsg("fencing token in column \"%s\" disagrees with the declared token for relation \"%s\"",
					token_column, citus_shown_relname(w->rel)),
			 errdetail("%s: the row offers token " INT64_FORMAT ", the transaction declared " INT64_FORMAT ".",
					   where(w), column, declared),
			 errhint("A declared token is the token of every write of the transaction; "
					 "leave column \"%s\" out of the statement, or set it to the declared token.",
					 token_column),
			 table_fields(w)));
	pg_unreachable();
}

void
fence_reject_no_term_left(const char *scope, int64 mark, int64 latest_term)
{
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_CLOCK_EXHAUSTED),
			 errmsg("fencing scope \"%s\" has no term left to issue", scope),
			 latest_term == PG_INT64_MAX ?
			 errdetail("Scope \"%s\" has issued term " INT64_FORMAT ", the largest bigint.",
					   scope, latest_term) :
			 errdetail("The mark of scope \"%s\" is " INT64_FORMAT ", the largest bigint.",
					   scope, mark),
			 latest_term == PG_INT64_MAX ?
			 errhint("Terms never repeat in a scope: use another scope name.") :
			 errhint("The scope's owner can repair it with fencing.reset_mark(%s, mark), "
					 "once no writer holds a token above that mark. Other scopes are not affected.",
					 quote_literal_cstr(scope))));
	pg_unreachable();
}

void
fence_reject_no_band(int64 timeline, int64 generation, int64 bands)
{
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_CLOCK_EXHAUSTED),
			 errmsg("timeline %lld has no band of fencing terms in clock generation %lld",
					(long long) timeline, (long long) generation),
			 errdetail("Terms carry their band in their top bits: generation plus timeline minus 1 must be below %lld.",
					   (long long) bands),
			 errhint("No term was issued and nothing was written. Moves use a few bands each: a generation or a claim time this far off comes from a row of fencing.clock written by hand; a superuser compares its claims (SELECT * FROM fencing.clock ORDER BY claimed_at) with how the database was moved.")));
	pg_unreachable();
}

void
fence_reject_clock_unconfirmed(int64 timeline, const char *why, const char *setting)
{
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_CLOCK_UNCONFIRMED),
			 errmsg("the fencing clock awaits confirmation"),
			 errdetail("%s On timeline %lld this server cannot tell whether terms it is about to issue were issued before by another server, so %s = 'confirm' keeps it from issuing any.",
					   why, (long long) timeline, setting),
			 errhint("After making sure no other copy of this database issues terms, a superuser runs: SELECT fencing.confirm_clock();")));
	pg_unreachable();
}

void
fence_reject_out_of_band(const char *scope, bool issued, int64 mark, int64 latest_term,
						 int64 timeline, int64 term_floor, int64 term_limit)
{
	int64		highest = Max(mark, latest_term);
	int64		reset_to = Max(latest_term, 0);
	const char *quoted = quote_literal_cstr(scope);

	ereport(ERROR,
			(errcode(ERRCODE_FENCING_OUT_OF_BAND),
			 errmsg("fencing scope \"%s\" has no term left in the band of timeline " INT64_FORMAT,
					scope, timeline),
			 latest_term >= 0 ?
			 errdetail("Scope \"%s\" has mark " INT64_FORMAT " and latest term " INT64_FORMAT
					   ", so its next term would be " INT64_FORMAT ". The band of timeline " INT64_FORMAT
					   " holds terms " INT64_FORMAT " to " INT64_FORMAT " (term_limit " INT64_FORMAT
					   "): the next timeline issues from term_limit on, so a term at or above it "
					   "could be issued again after an asynchronous failover.",
					   scope, mark, latest_term, highest + 1, timeline,
					   term_floor, term_limit - 1, term_limit) :
			 errdetail("Scope \"%s\" has mark " INT64_FORMAT " and no term yet, so its next term "
					   "would be " INT64_FORMAT ". The band of timeline " INT64_FORMAT
					   " holds terms " INT64_FORMAT " to " INT64_FORMAT " (term_limit " INT64_FORMAT
					   "): the next timeline issues from term_limit on, so a term at or above it "
					   "could be issued again after an asynchronous failover.",
					   scope, mark, highest + 1, timeline,
					   term_floor, term_limit - 1, term_limit),
			 latest_term >= term_limit - 1 ?
			 (issued ?
			  errhint("Terms never repeat in a scope: use another scope name; or, once no other copy "
					  "of this database issues terms, a superuser moves the clock's band above every "
					  "term issued: SELECT fencing.confirm_clock();") :
			  errhint("Scope \"%s\" takes external tokens: raise its mark with fencing.takeover(%s, token) "
					  "and your lock service's next token instead of issuing terms, or use another scope name.",
					  scope, quoted)) :
			 (issued ?
			  errhint("Once no writer holds a token above " INT64_FORMAT ", the scope's owner lowers "
					  "the mark into the band: SELECT fencing.reset_mark(%s, " INT64_FORMAT ");",
					  reset_to, quoted, reset_to) :
			  errhint("Scope \"%s\" takes external tokens: raise its mark with fencing.takeover(%s, token) "
					  "and your lock service's next token instead of issuing terms; or, once no writer "
					  "holds a token above " INT64_FORMAT ", the scope's owner lowers the mark into the "
					  "band: SELECT fencing.reset_mark(%s, " INT64_FORMAT ");",
					  scope, quoted, reset_to, quoted, reset_to))));
	pg_unreachable();
}

void
fence_reject_sequence_out_of_band(int64 value, int64 timeline, int64 term_floor,
								  int64 term_limit, bool legacy)
{
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_OUT_OF_BAND),
			 errmsg("the fencing clock's sequence is outside the band of timeline " INT64_FORMAT,
					timeline),
			 errdetail("fencing.epoch_seq returned " INT64_FORMAT ". The band of timeline " INT64_FORMAT
					   " holds terms " INT64_FORMAT " to " INT64_FORMAT " (term_limit " INT64_FORMAT
					   "): the next timeline issues from term_limit on, so a term at or above it "
					   "could be issued again after an asynchronous failover.",
					   value, timeline, term_floor, term_limit - 1, term_limit),
			 legacy ?
			 errhint("Update the extension (ALTER EXTENSION fencing UPDATE): from 1.2 on, each "
					 "scope's terms are kept above its own mark and latest term, and the sequence "
					 "can then be moved back into the band.") :
			 errhint("Each scope's terms are kept above its own mark and latest term, whatever the "
					 "sequence returns: a superuser moves the sequence back into the band with "
					 "SELECT pg_catalog.setval('fencing.epoch_seq', " INT64_FORMAT ");",
					 Max(term_floor, 1))));
	pg_unreachable();
}

void
fence_count_bypass(Relation rel, const char *scope)
{
	Oid			scope_owner = InvalidOid;

	if (!fence_stats_collected())
		return;
	if (scope != NULL &&
		uncounted_reason(scope, rel, SCOPE_PRIV_WRITE, NULL, &scope_owner) != NULL)
		scope = NULL;
	fence_stats_count(FENCE_STAT_BYPASSED, citus_shown_relid(rel), rel->rd_rel->relowner,
					  scope, scope_owner, -1, -1, -1);
}

void
fence_count_scope_event(const char *scope, FenceStatKind kind, const ScopeInfo *known)
{
	Oid			owner;

	if (!fence_stats_collected() ||
		uncounted_reason(scope, NULL, SCOPE_PRIV_LEAD, known, &owner) != NULL)
		return;
	fence_stats_count(kind, InvalidOid, InvalidOid, scope, owner, -1, -1, -1);
}

