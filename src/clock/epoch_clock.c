/*-------------------------------------------------------------------------
 *
 * epoch_clock.c
 *	  fence_next_epoch(): issues a new term for a scope on leader takeover.
 *
 * The clock is the sequence fencing.epoch_seq.  A bare nextval() is not
 * enough: it WAL-logs only every 32 values and never flushes, so a value
 * handed out by a transaction that writes nothing else can be handed out
 * again after a crash.  Each term is therefore recorded in fencing.terms by
 * the issuing transaction, whose commit is forced to be flushed (and to wait
 * for a synchronous standby) whatever synchronous_commit the session has.
 *
 * The issuing transaction holds the scope lock exclusively, so the new mark
 * waits for in-flight writers of the scope and fences the old leader the
 * moment it commits.
 *
 * Each scope has its own clock: its next term is the larger of nextval()
 * and one above both its mark and its latest term, so terms are unique and
 * strictly increasing per scope.  No token of one scope moves the sequence
 * or another scope's terms (1.1 dragged the shared sequence with setval(),
 * which a single absurd token could exhaust for every scope); a scope whose
 * mark is at the largest bigint has no term left, and only it fails.  The
 * caller needs the "lead" privilege on the scope (security/scope_acl.c).
 *
 * Terms carry the timeline (clock/term_band.c): no term is below the floor
 * of the server's current timeline, so after any promotion, however much
 * WAL the old primary lost, the new primary's terms are above every term
 * the old one issued, and the first of them fences every older leader.  The
 * band also carries the clock's generation (clock/clock_generation.c),
 * which moves above every band used when the database was moved to another
 * cluster (pg_upgrade, a restore), whose timelines start again at 1.
 *
 * The bands protect only the terms inside them: the band of timeline T ends
 * where timeline T + 1's begins (term_limit), so a term at or above it could
 * be issued again by the next timeline after an asynchronous failover.  The
 * clock never issues one: a scope whose next term would be term_limit or
 * above (its mark or latest term is term_limit - 1 or more: pushed there by
 * an external token, reset_mark(), or its own last term of the band), or a
 * shared sequence that reached term_limit, gets no term (ZF007) and nothing
 * changes.  No automatic move of the generation above such a scope: any
 * role that may write a scope can push its mark, and would spend the bands
 * of every scope; confirm_clock() is a superuser's.
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/builtins.h"

#include "base/input_checks.h"
#include "clock/clock_generation.h"
#include "clock/epoch_clock.h"
#include "clock/term_band.h"
#include "clock/term_retention.h"
#include "marks/scope_mark.h"
#include "state/cluster_marks.h"
#include "state/scope_rows.h"
#include "security/scope_acl.h"
#include "state/direct_row.h"
#include "state/extension_state.h"
#include "telemetry/rejection.h"

#define FENCING_LOCKTAG_CLOCK	0xFE02

/*
 * The band the next term of a scope is issued in, on timeline "tli":
 * [floor, limit).  The next timeline's band starts at limit, so a term at or
 * above it could be issued again after an asynchronous failover (the new
 * primary may never have received it): a scope whose next term would be
 * limit or above (its mark or latest term is limit - 1 or more) gets none
 * (ZF007), before the shared sequence moves.  Its mark and latest term are
 * left as they are: only its owner (reset_mark), its lock service
 * (takeover) or a superuser (confirm_clock) can bring it back.
 */
typedef struct IssueBand
{
	int64		tli;
	int64		floor;
	int64		limit;
} IssueBand;

static void
clock_require_in_band(const char *scope, bool issued, int64 mark, int64 latest,
					  const IssueBand *band)
{
	int64		highest = Max(mark, latest);

	if (highest == PG_INT64_MAX)
		fence_reject_no_term_left(scope, mark, latest);
	if (highest >= band->limit - 1)
		fence_reject_out_of_band(scope, issued, mark, latest, band->tli,
								 band->floor, band->limit);
}

/*
 * The next term of a scope: above its mark and its latest term, at least the
 * floor of the current timeline, below its limit (clock_require_in_band()
 * checked the scope), never moving the shared sequence for anyone else.  A
 * sequence outside the band (moved there by hand, or by 1.1's clock) refuses
 * every term (ZF007) rather than issue one the next timeline may issue too.
 */
static int64
clock_next_for_scope(int64 mark, int64 latest, const IssueBand *band)
{
	int64		value;

	value = nextval_internal(fencing_epoch_seq_relid(), false);
	if (value >= band->limit)
		fence_reject_sequence_out_of_band(value, band->tli, band->floor, band->limit, false);
	return Max(Max(value, Max(mark, latest) + 1), band->floor);
}

/*
 * 1.1's clock, for a schema not yet updated to 1.2 (terms are then unique
 * across scopes): the next value of the shared sequence above "floor",
 * moving the sequence forward with setval() when needed.  nextval() runs
 * under the clock lock in share mode; setval() needs it exclusively.
 */
static int64
clock_next_above_legacy(int64 floor)
{
	Oid			seq = fencing_epoch_seq_relid();
	LOCKTAG		tag;
	int64		value;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, 0, FENCING_LOCKTAG_CLOCK);

	(void) LockAcquire(&tag, ShareLock, false, false);
	value = nextval_internal(seq, false);
	LockRelease(&tag, ShareLock, false);
	if (value > floor)
		return value;

	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	value = nextval_internal(seq, false);
	if (value <= floor)
	{
		FencingUserContext uctx;

		fencing_become_owner(&uctx);
		DirectFunctionCall2(setval_oid, ObjectIdGetDatum(seq), Int64GetDatum(floor));
		fencing_restore_user(&uctx);
		value = nextval_internal(seq, false);
	}
	LockRelease(&tag, ExclusiveLock, false);
	return value;
}

/*
 * Record the term in fencing.terms and make it the scope's mark and latest
 * term, directly (state/direct_row.c: no executor, no trigger).  row is
 * the scope's row as read under the scope lock, or NULL when the scope was
 * created since (scope_acl_require_known() creates a missing one).  The other
 * backends forget their cached mark of the scope when this commits.
 */
static void
record_term(Relation scopes, const char *scope, HeapTuple row, int64 epoch, const char *holder)
{
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	Relation	terms = table_open(fencing_relid(FENCING_REL_TERMS), RowExclusiveLock);
	Datum		term_values[Natts_terms];
	bool		term_nulls[Natts_terms] = {0};
	NameData	issued_by;

	if (RelationGetDescr(terms)->natts != Natts_terms ||
		!fencing_sql_at_least(FENCING_SQL_1_1))
		elog(ERROR, "fencing.terms or fencing.scopes lacks the columns of the epoch clock");

	/* the caller, also when called from a SECURITY DEFINER function */
	namestrcpy(&issued_by, GetUserNameFromId(GetOuterUserId(), false));
	term_values[Anum_terms_epoch - 1] = Int64GetDatum(epoch);
	term_values[Anum_terms_scope - 1] = CStringGetTextDatum(scope);
	term_values[Anum_terms_holder - 1] = CStringGetTextDatum(holder);
	term_values[Anum_terms_issued_at - 1] = TimestampTzGetDatum(now);
	term_values[Anum_terms_issued_by - 1] = NameGetDatum(&issued_by);
	direct_row_insert(terms, heap_form_tuple(RelationGetDescr(terms), term_values, term_nulls));

	scope_rows_set_term(scopes, scope, row, epoch, term_values[Anum_terms_holder - 1], now);
	/* the scope's expired terms, a few per term issued (fencing.term_retention) */
	term_retention_apply(terms, scope, epoch, now);
	table_close(terms, NoLock);
	/* later reads of this transaction see the new term and mark */
	CommandCounterIncrement();
}

/*
 * Issue the next term of a scope to holder: waits for every in-flight
 * writer of the scope, checks the lead privilege of the current role under
 * the lock (creating a missing scope, 'issued', owned by it), records the
 * term and makes it the mark; the commit is made durable.  The scope's row
 * is read once, under the lock, for the mark, the privilege and the update.
 */
int64
epoch_clock_issue(const char *scope, const char *holder)
{
	Relation	scopes = table_open(fencing_scopes_relid(), RowExclusiveLock);
	HeapTuple	row;
	int64		mark;
	int64		epoch;
	IssueBand	band;
	TermBand	term_band;
	ScopeInfo	info;

	mark = scope_mark_lock_exclusive(scope, SCOPE_MISSING_CREATE_ISSUED, SCOPE_PRIV_LEAD, &row);
	scope_info_from_row(scopes, row, &info);
	scope_acl_require_known(scope, SCOPE_PRIV_LEAD, GetUserId(), SCOPE_MISSING_CREATE_ISSUED, &info);
	/* a Citus worker issues no term, whatever its own clock's band holds */
	cluster_marks_require_coordinator(scope);
	/*
	 * fixed for a writing transaction: one begun in recovery stays read-only.
	 * The clock's generation moves here when this server is not the one
	 * that claimed it (clock/clock_generation.c).
	 */
	band.tli = term_band_timeline();
	term_band = clock_band_for_issue(band.tli);
	band.floor = term_band_floor(band.tli, term_band);
	band.limit = term_band_limit(band.tli, term_band);
	/* a scope created here is 'issued'; before 1.2 every scope took terms */
	clock_require_in_band(scope,
						  info.issued || !info.exists || !fencing_sql_at_least(FENCING_SQL_1_2),
						  mark, info.epoch, &band);
	if (fencing_sql_at_least(FENCING_SQL_1_2))
		epoch = clock_next_for_scope(mark, info.epoch, &band);
	else
	{
		epoch = clock_next_above_legacy(Max(mark, band.floor - 1));
		if (epoch >= band.limit)
			fence_reject_sequence_out_of_band(epoch, band.tli, band.floor, band.limit, true);
	}
	Assert(epoch >= band.floor && epoch < band.limit);
	record_term(scopes, scope, row, epoch, holder);
	table_close(scopes, NoLock);
	fence_count_scope_event(scope, FENCE_STAT_TERMS, &info);
	scope_mark_remember(scope, epoch);
	fencing_require_durable_commit();
	return epoch;
}

/* fence_next_epoch(scope text, holder text DEFAULT NULL) returns bigint */
FENCING_FUNCTION(fencing_fence_next_epoch);

Datum
fencing_fence_next_epoch(PG_FUNCTION_ARGS)
{
	char	   *scope;
	char	   *holder;
	ScopeInfo	info;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fencing scope name must not be null")));
	scope = text_to_cstring(PG_GETARG_TEXT_PP(0));
	fencing_check_scope_name(scope);

	if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
	{
		holder = text_to_cstring(PG_GETARG_TEXT_PP(1));
		fencing_check_holder(holder);
	}
	else
		holder = GetUserNameFromId(GetOuterUserId(), false);

	/*
	 * Privilege first: a role that may not lead the scope must not queue an
	 * exclusive lock behind its writers.  Checked again under the lock,
	 * which also creates a new scope, owned by the caller, 'issued'.  A
	 * superuser passes this check whatever the registry says (no read).
	 */
	if (!superuser_arg(GetUserId()))
		scope_acl_require(scope, SCOPE_PRIV_LEAD, GetUserId(), SCOPE_MISSING_MAY_CREATE, &info);
	PG_RETURN_INT64(epoch_clock_issue(scope, holder));
}
