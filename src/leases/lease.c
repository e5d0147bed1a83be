/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  acquire_lease(), renew_lease(), release_lease(): leases inside Postgres.
 *
 * A lease says who should lead a scope, judged by the database server's
 * clock alone.  Granting one issues a new term (clock/epoch_clock.c), so the
 * previous holder is fenced the moment the grant commits.  The lease is only
 * advisory: the fence stays the safety, and a lease whose term is below the
 * scope's committed mark (a higher term was issued, or a higher token
 * written) is not live: its holder can neither renew nor re-acquire it.
 *
 * The callers of one scope's lease queue on its lease lock, an advisory-type
 * heavyweight lock with field4 0xFE03 (pg_locks: objsubid -509), held to the
 * end of the transaction.  Under it the lease row is read with a fresh
 * snapshot and written directly (state/direct_row.c), and the mark that
 * judges whether the lease is fenced is read fresh too.  The lead privilege
 * is checked before the lock, so a role that may not lead the scope cannot
 * queue ahead of those who may.  A grant then takes the scope lock
 * exclusively (waiting for the previous holder's open writes) to issue the
 * term.
 *
 * Until 1.2 these were plpgsql functions: a grant cost about 600,000
 * instructions (five statements, the CHECK constraints of fencing.scopes
 * planned at each UPDATE), four times a hand-written upsert of a lease row.
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "base/input_checks.h"
#include "clock/epoch_clock.h"
#include "marks/scope_lock.h"
#include "marks/scope_mark.h"
#include "security/scope_acl.h"
#include "state/direct_row.h"
#include "state/extension_state.h"
#include "telemetry/rejection.h"

/* A scope's lease row, as read under the lease lock. */
typedef struct Lease
{
	bool		exists;
	char	   *holder;			/* '' before the first grant */
	int64		term;			/* 0 before the first grant */
	TimestampTz expires_at;
	bool		released;
	int64		grants;
	HeapTuple	row;			/* the row as read, or NULL */
} Lease;

/*
 * A ttl is judged by the expiry it gives, computed as the lease's expiry is:
 * now + ttl by timestamptz_pl_interval, months and days on the calendar of
 * the session's time zone.  Comparing the interval itself counts a month as
 * 30 days: '3000000 months -90000000 days 1 second' compares as one second
 * and ends in the year 5615.  The expiry must be at least 1 millisecond and
 * at most one day after now: now + '1 day' by the same arithmetic, or 24
 * hours when a daylight-saving change makes that day shorter.  A field of
 * more than TTL_FIELD_YEARS is refused before any arithmetic, which could
 * leave the range of timestamps (three such fields stay inside it).
 */
#define TTL_FIELD_YEARS		2000

static TimestampTz
timestamp_plus(TimestampTz t, const Interval *span)
{
	return DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
												   TimestampTzGetDatum(t),
												   IntervalPGetDatum(span)));
}

static bool
ttl_fields_in_range(const Interval *ttl)
{
	return ttl->month >= -12 * TTL_FIELD_YEARS && ttl->month <= 12 * TTL_FIELD_YEARS &&
		ttl->day >= -366 * TTL_FIELD_YEARS && ttl->day <= 366 * TTL_FIELD_YEARS &&
		ttl->time >= -366 * TTL_FIELD_YEARS * USECS_PER_DAY &&
		ttl->time <= 366 * TTL_FIELD_YEARS * USECS_PER_DAY;
}

/*
 * The expiry a ttl gives at "now", or an error (22023) saying why it is
 * refused.  The message names the ttl in seconds (extract(epoch), a month
 * counted as 30 days) when that count gives the same verdict as the expiry;
 * otherwise it names the interval as given and the DETAIL the expiry.
 */
static TimestampTz
ttl_expiry(TimestampTz now, const Interval *ttl)
{
	static const Interval shortest = {.time = 1000, .day = 0, .month = 0};	/* 1 millisecond */
	static const Interval one_day = {.time = 0, .day = 1, .month = 0};
	bool		in_range = ttl_fields_in_range(ttl);
	TimestampTz expires = 0;
	bool		too_short = false;
	bool		nominally_short;
	bool		nominally_long;
	char	   *seconds;
	char	   *given;

	if (in_range)
	{
		/* hours, minutes and seconds only: no calendar to consult */
		expires = ttl->month == 0 && ttl->day == 0 ? now + ttl->time : timestamp_plus(now, ttl);
		/* now + '1 day' is at least 24 hours later: computed only past those */
		if (expires >= now + shortest.time &&
			(expires <= now + USECS_PER_DAY ||
			 expires <= timestamp_plus(now, &one_day)))
			return expires;
		too_short = expires < now + shortest.time;
	}
	nominally_short = DatumGetBool(DirectFunctionCall2(interval_lt, IntervalPGetDatum(ttl),
													   IntervalPGetDatum(&shortest)));
	nominally_long = DatumGetBool(DirectFunctionCall2(interval_gt, IntervalPGetDatum(ttl),
													  IntervalPGetDatum(&one_day)));
	if (!in_range)
		too_short = nominally_short;

	if (in_range && (too_short ? nominally_short : nominally_long))
	{
		/* extract(epoch FROM ttl)::float8, as text */
		seconds = DatumGetCString(DirectFunctionCall1(float8out,
													  DirectFunctionCall1(numeric_float8,
																		  DirectFunctionCall2(extract_interval,
																							  CStringGetTextDatum("epoch"),
																							  IntervalPGetDatum(ttl)))));
		if (too_short)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lease ttl of %s seconds is too short", seconds),
					 errdetail("A lease lasts at least 1 millisecond.")));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease ttl of %s seconds is too long", seconds),
				 errdetail("A lease lasts at most 1 day."),
				 errhint("Renew a shorter lease instead: a long one keeps a dead leader in place.")));
	}

	/* months and days that a 30-day count judges otherwise than the calendar */
	given = quote_literal_cstr(DatumGetCString(DirectFunctionCall1(interval_out,
																   IntervalPGetDatum(ttl))));
	if (!in_range)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease ttl %s is too %s", given, too_short ? "short" : "long"),
				 errdetail("A lease lasts at least 1 millisecond and at most 1 day; a ttl with a field "
						   "beyond %d years is not added to the current time.", TTL_FIELD_YEARS)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("lease ttl %s is too %s", given, too_short ? "short" : "long"),
			 errdetail("A lease lasts %s; this ttl, added to the current time with months and days "
					   "on the calendar, ends at %s%s.",
					   too_short ? "at least 1 millisecond" : "at most 1 day",
					   timestamptz_to_str(expires),
					   expires <= now ? ", not after now" : ""),
			 errhint("Give the ttl in hours, minutes and seconds.")));
	return 0;					/* keep compiler quiet */
}

static Interval *
check_ttl(FunctionCallInfo fcinfo, int argno)
{
	Interval   *ttl;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lease ttl must not be null")));
	ttl = PG_GETARG_INTERVAL_P(argno);
	(void) ttl_expiry(GetCurrentTimestamp(), ttl);
	return ttl;
}

static int64
check_term(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lease term must not be null")));
	return PG_GETARG_INT64(argno);
}

/*
 * The privilege, then the lease lock, held to the end of the transaction.
 * A lease changes: refused in a read-only transaction (and on a standby).
 * The lock is keyed by the scope's id, so it is taken only on a scope that
 * exists: acquire creates a missing one first ('issued', the caller's, as
 * its first term would), renew and release lock nothing for a missing
 * scope (it has no lease to change).  With wait false, returns false at
 * once when another transaction holds the lock (then see read_lease_for).
 */
static bool
lock_lease(const char *scope, ScopeMissing missing, const char *function, LOCKTAG *tag,
		   bool wait)
{
	ScopeInfo	info;
	int64		scope_id;

	/* a superuser passes whatever the registry says (no read) */
	if (!superuser_arg(GetUserId()))
		scope_acl_require(scope, SCOPE_PRIV_LEAD, GetUserId(), missing, &info);
	PreventCommandIfReadOnly(function);
	scope_id = scope_mark_scope_id(scope, missing == SCOPE_MISSING_MAY_CREATE ?
								   SCOPE_MISSING_CREATE_ISSUED : SCOPE_MISSING_OK,
								   SCOPE_PRIV_LEAD);
	/* no scope has id 0: a tag nobody takes, should read_lease_for() ask for it */
	scope_lock_tag(tag, scope_id, FENCING_LOCKTAG_LEASE);
	if (scope_id == 0)
		return false;
	return LockAcquire(tag, ExclusiveLock, false, !wait) != LOCKACQUIRE_NOT_AVAIL;
}

/* The scope's lease row, read with a fresh snapshot. */
static void
read_lease(Relation rel, const char *scope, Lease *lease, bool locked)
{
	Oid			pkey = fencing_relid(FENCING_REL_LEASES_PKEY);
	HeapTuple	tuple = direct_row_fetch(rel, pkey, scope);
	TupleDesc	desc = RelationGetDescr(rel);
	bool		isnull;

	/* a lease about to change: as SELECT ... FOR UPDATE under REPEATABLE READ */
	if (locked)
		direct_row_check_serializable(rel, pkey, scope, tuple);
	memset(lease, 0, sizeof(*lease));
	lease->holder = "";
	if (!HeapTupleIsValid(tuple))
		return;
	if (desc->natts != Natts_leases)
		elog(ERROR, "fencing.leases lacks the columns of the lease functions");
	lease->exists = true;
	lease->holder = TextDatumGetCString(heap_getattr(tuple, Anum_leases_holder, desc, &isnull));
	lease->term = DatumGetInt64(heap_getattr(tuple, Anum_leases_term, desc, &isnull));
	lease->expires_at = DatumGetTimestampTz(heap_getattr(tuple, Anum_leases_expires_at, desc, &isnull));
	(void) heap_getattr(tuple, Anum_leases_released_at, desc, &lease->released);
	lease->released = !lease->released;
	lease->grants = DatumGetInt64(heap_getattr(tuple, Anum_leases_grants, desc, &isnull));
	lease->row = tuple;
}

/*
 * Whether the lease is live now: not released, not expired by the server's
 * clock, and its term not fenced by a higher committed mark (read fresh).
 */
static bool
lease_live(const char *scope, const Lease *lease, TimestampTz now)
{
	ScopeInfo	info;

	if (!lease->exists || lease->released || lease->expires_at <= now)
		return false;
	if (lease->term == 0)
		return true;
	(void) scope_info_read(scope, &info);
	return !(info.mark > lease->term);
}

/* Whether the lease is live and held by holder in term (renewal and release change it). */
static bool
held(const char *scope, const Lease *lease, TimestampTz now, const char *holder, int64 term)
{
	return lease->exists && strcmp(lease->holder, holder) == 0 && lease->term == term &&
		lease_live(scope, lease, now);
}

typedef bool (*LeaseChange) (const char *scope, const Lease *lease, TimestampTz now,
							 const char *holder, int64 term);

/*
 * The lease as a renewal or release must judge it, at *now.  Without the
 * lease lock (another transaction holds it: an acquirer about to grant,
 * say), the committed lease is read first, and the call waits for the lock
 * only if "changes" says it would change the lease.  One that is refused
 * answers at once, rightly: no transaction in flight can make a lease live
 * again for a holder and term that are not live now (a grant issues a new
 * term).  So the old holder, in the middle of a transaction that wrote under
 * its term, learns at once that its renewal is refused, rather than queueing
 * behind the new holder, which waits for that transaction (a deadlock).  An
 * acquire always waits: the transaction in flight may release the lease.
 * Returns whether the lease lock is held.
 */
static bool
read_lease_for(Relation rel, const char *scope, Lease *lease, TimestampTz *now, bool locked,
			   LOCKTAG *tag, LeaseChange changes, const char *holder, int64 term)
{
	for (;;)
	{
		read_lease(rel, scope, lease, locked);
		*now = GetCurrentTimestamp();
		if (locked || !changes(scope, lease, *now, holder, term))
			return locked;
		(void) LockAcquire(tag, ExclusiveLock, false, false);
		locked = true;
	}
}

/* Change columns of the scope's lease row, which exists. */
static void
update_lease(Relation rel, const char *scope, const Lease *lease,
			 int ncols, int *cols, Datum *values, bool *nulls)
{
	direct_row_change(rel, fencing_relid(FENCING_REL_LEASES_PKEY), scope, lease->row,
					  ncols, cols, values, nulls);
}

/* The lease's new expiry, and the time it was renewed: now + ttl. */
static void
extend_lease(Relation rel, const char *scope, const Lease *lease,
			 TimestampTz now, TimestampTz expires_at)
{
	int			cols[] = {Anum_leases_renewed_at, Anum_leases_expires_at};
	Datum		values[] = {TimestampTzGetDatum(now), TimestampTzGetDatum(expires_at)};
	bool		nulls[] = {false, false};

	update_lease(rel, scope, lease, lengthof(cols), cols, values, nulls);
}

/* judged again where it is used: at another "now" the calendar may differ */
static TimestampTz
plus_ttl(TimestampTz t, Interval *ttl)
{
	return ttl_expiry(t, ttl);
}

/*
 * The result row descriptors of the lease functions, kept for the backend:
 * building one from the function's OUT parameters each time a statement
 * starts cost about a twentieth of a renewal.  Keyed by the function's OID;
 * any change of a function (pg_proc) forgets them all.
 */
typedef struct ResultDesc
{
	Oid			fn_oid;
	TupleDesc	desc;			/* blessed, in CacheMemoryContext */
} ResultDesc;

static ResultDesc result_descs[4];
static int	n_result_descs = 0;
static bool result_descs_watched = false;

static void
forget_result_descs(Datum arg, int cacheid, uint32 hashvalue)
{
	for (int i = 0; i < n_result_descs; i++)
		FreeTupleDesc(result_descs[i].desc);
	n_result_descs = 0;
}

static TupleDesc
result_desc(FunctionCallInfo fcinfo)
{
	Oid			fn_oid = fcinfo->flinfo->fn_oid;
	TupleDesc	desc;
	MemoryContext old;

	for (int i = 0; i < n_result_descs; i++)
		if (result_descs[i].fn_oid == fn_oid)
			return result_descs[i].desc;
	if (!result_descs_watched)
	{
		CacheRegisterSyscacheCallback(PROCOID, forget_result_descs, (Datum) 0);
		result_descs_watched = true;
	}
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	old = MemoryContextSwitchTo(CacheMemoryContext);
	desc = BlessTupleDesc(CreateTupleDescCopy(desc));
	MemoryContextSwitchTo(old);
	if (n_result_descs == lengthof(result_descs))
		forget_result_descs((Datum) 0, PROCOID, 0);
	result_descs[n_result_descs].fn_oid = fn_oid;
	result_descs[n_result_descs].desc = desc;
	n_result_descs++;
	return desc;
}

/* The function's result row. */
static Datum
result_row(FunctionCallInfo fcinfo, Datum *values, bool *nulls)
{
	return HeapTupleGetDatum(heap_form_tuple(result_desc(fcinfo), values, nulls));
}

/*
 * acquire_lease(scope, holder, ttl) -> (granted, term, lease_holder, expires_at)
 *
 * Free, expired, released or fenced: a new term, and the lease is holder's.
 * Live and holder's own: the same term, the lease extended.  Live and
 * someone else's: nothing, and who holds it until when.
 */
FENCING_FUNCTION(fencing_acquire_lease);

Datum
fencing_acquire_lease(PG_FUNCTION_ARGS)
{
	char	   *scope;
	char	   *holder;
	Interval   *ttl;
	Relation	rel;
	Lease		lease;
	TimestampTz now;
	LOCKTAG		tag;
	Datum		values[4];
	bool		nulls[4] = {0};

	fencing_check_name_args(fcinfo, &scope, &holder);
	ttl = check_ttl(fcinfo, 2);
	(void) lock_lease(scope, SCOPE_MISSING_MAY_CREATE, "acquire_lease()", &tag, true);

	rel = table_open(fencing_relid(FENCING_REL_LEASES), RowExclusiveLock);
	read_lease(rel, scope, &lease, true);
	now = GetCurrentTimestamp();
	if (lease_live(scope, &lease, now))
	{
		values[0] = BoolGetDatum(strcmp(lease.holder, holder) == 0);
		if (DatumGetBool(values[0]))
		{
			/* the holder asks again: same term, lease extended */
			lease.expires_at = plus_ttl(now, ttl);
			extend_lease(rel, scope, &lease, now, lease.expires_at);
		}
		values[1] = Int64GetDatum(lease.term);
		values[2] = CStringGetTextDatum(lease.holder);
		values[3] = TimestampTzGetDatum(lease.expires_at);
	}
	else
	{
		/* a new term; waits for the old holder's open writes */
		int64		term = epoch_clock_issue(scope, holder);
		TimestampTz expires_at;
		int			cols[] = {Anum_leases_holder, Anum_leases_term, Anum_leases_acquired_at,
							  Anum_leases_renewed_at, Anum_leases_expires_at,
							  Anum_leases_released_at, Anum_leases_grants};
		Datum		row[Natts_leases];
		bool		row_nulls[Natts_leases] = {0};

		now = GetCurrentTimestamp();
		expires_at = plus_ttl(now, ttl);
		row[Anum_leases_scope - 1] = CStringGetTextDatum(scope);
		row[Anum_leases_holder - 1] = CStringGetTextDatum(holder);
		row[Anum_leases_term - 1] = Int64GetDatum(term);
		row[Anum_leases_acquired_at - 1] = TimestampTzGetDatum(now);
		row[Anum_leases_renewed_at - 1] = TimestampTzGetDatum(now);
		row[Anum_leases_expires_at - 1] = TimestampTzGetDatum(expires_at);
		row[Anum_leases_released_at - 1] = (Datum) 0;
		row_nulls[Anum_leases_released_at - 1] = true;
		row[Anum_leases_grants - 1] = Int64GetDatum(lease.grants + 1);
		if (lease.exists)
		{
			Datum		changed[lengthof(cols)];
			bool		changed_nulls[lengthof(cols)];

			for (int i = 0; i < (int) lengthof(cols); i++)
			{
				changed[i] = row[cols[i] - 1];
				changed_nulls[i] = row_nulls[cols[i] - 1];
			}
			update_lease(rel, scope, &lease, lengthof(cols), cols, changed, changed_nulls);
		}
		else
			direct_row_insert(rel, heap_form_tuple(RelationGetDescr(rel), row, row_nulls));

		/* counted: taking over an unreleased lease is an expiry */
		fence_count_scope_event(scope, FENCE_STAT_LEASE_GRANTS, NULL);
		if (lease.holder[0] != '\0' && !lease.released)
			fence_count_scope_event(scope, FENCE_STAT_LEASE_EXPIRIES, NULL);
		values[0] = BoolGetDatum(true);
		values[1] = Int64GetDatum(term);
		values[2] = CStringGetTextDatum(holder);
		values[3] = TimestampTzGetDatum(expires_at);
	}
	table_close(rel, NoLock);
	CommandCounterIncrement();
	PG_RETURN_DATUM(result_row(fcinfo, values, nulls));
}

/*
 * renew_lease(scope, holder, term, ttl) -> (renewed, expires_at, lease_holder, lease_term)
 *
 * Extends the live lease of this holder and term; anything else changes
 * nothing, and says who holds the lease now (NULL when nobody does).
 */
FENCING_FUNCTION(fencing_renew_lease);

Datum
fencing_renew_lease(PG_FUNCTION_ARGS)
{
	char	   *scope;
	char	   *holder;
	Interval   *ttl;
	int64		term;
	Relation	rel;
	Lease		lease;
	TimestampTz now;
	LOCKTAG		tag;
	bool		locked;
	Datum		values[4];
	bool		nulls[4] = {0};

	fencing_check_name_args(fcinfo, &scope, &holder);
	ttl = check_ttl(fcinfo, 3);
	term = check_term(fcinfo, 2);
	locked = lock_lease(scope, SCOPE_MISSING_OK, "renew_lease()", &tag, false);

	rel = table_open(fencing_relid(FENCING_REL_LEASES), RowExclusiveLock);
	locked = read_lease_for(rel, scope, &lease, &now, locked, &tag, held, holder, term);
	if (locked && held(scope, &lease, now, holder, term))
	{
		TimestampTz expires_at = plus_ttl(now, ttl);

		extend_lease(rel, scope, &lease, now, expires_at);
		values[0] = BoolGetDatum(true);
		values[1] = TimestampTzGetDatum(expires_at);
		values[2] = CStringGetTextDatum(holder);
		values[3] = Int64GetDatum(term);
	}
	else
	{
		fence_count_scope_event(scope, FENCE_STAT_RENEWALS_REFUSED, NULL);
		values[0] = BoolGetDatum(false);
		nulls[1] = true;
		if (lease_live(scope, &lease, now))
		{
			values[2] = CStringGetTextDatum(lease.holder);
			values[3] = Int64GetDatum(lease.term);
		}
		else
			nulls[2] = nulls[3] = true;
	}
	table_close(rel, NoLock);
	CommandCounterIncrement();
	PG_RETURN_DATUM(result_row(fcinfo, values, nulls));
}

/*
 * release_lease(scope, holder, term) -> boolean
 *
 * Ends the live lease of this holder and term at once, so the next acquire
 * gets a new term; anything else changes nothing and returns false.
 */
FENCING_FUNCTION(fencing_release_lease);

Datum
fencing_release_lease(PG_FUNCTION_ARGS)
{
	char	   *scope;
	char	   *holder;
	int64		term;
	Relation	rel;
	Lease		lease;
	TimestampTz now;
	LOCKTAG		tag;
	bool		locked;
	bool		released;

	fencing_check_name_args(fcinfo, &scope, &holder);
	term = check_term(fcinfo, 2);
	locked = lock_lease(scope, SCOPE_MISSING_OK, "release_lease()", &tag, false);

	rel = table_open(fencing_relid(FENCING_REL_LEASES), RowExclusiveLock);
	locked = read_lease_for(rel, scope, &lease, &now, locked, &tag, held, holder, term);
	released = locked && held(scope, &lease, now, holder, term);
	if (released)
	{
		int			cols[] = {Anum_leases_released_at, Anum_leases_expires_at};
		Datum		values[] = {TimestampTzGetDatum(now), TimestampTzGetDatum(now)};
		bool		nulls[] = {false, false};

		update_lease(rel, scope, &lease, lengthof(cols), cols, values, nulls);
	}
	table_close(rel, NoLock);
	CommandCounterIncrement();
	PG_RETURN_BOOL(released);
}
