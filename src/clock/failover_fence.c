/*-------------------------------------------------------------------------
 *
 * failover_fence.c
 *	  After a failover that lost commits: fence every term of the earlier
 *	  timelines at once, without waiting for each scope's next term.
 *
 * A promoted standby has the marks it had received.  A writer the old
 * primary had fenced by a term the failover lost is below the old mark but
 * may be at or above the surviving one, and is admitted again until the
 * scope's next term (which, being in the new timeline's band, fences every
 * older term: clock/term_band.c).  fence_older_timelines() closes that
 * window for the 'issued' scopes: it lifts every mark below the floor of the
 * server's timeline to that floor.  No term is ever issued at the floor
 * itself on an earlier timeline, so every holder of an older term is fenced;
 * the leaders take new terms (or leases: a lease below the mark is fenced
 * and granted again).  Meant for the failover manager's promotion hook.
 *
 * 'external' scopes are left alone: their tokens come from a lock service
 * and never reach a timeline's floor; their new holder calls takeover().
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "clock/clock_generation.h"
#include "clock/term_band.h"
#include "marks/scope_mark.h"
#include "security/scope_acl.h"
#include "state/extension_state.h"

/* The 'issued' scopes below the floor, read as the extension's owner. */
static List *
scopes_below(int64 band_floor, int32 max_scopes)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"SELECT s.scope FROM fencing.scopes AS s "
		"WHERE s.tokens OPERATOR(pg_catalog.=) 'issued' AND s.mark OPERATOR(pg_catalog.<) $1 "
		"ORDER BY s.scope LIMIT $2";
	Oid			argtypes[2] = {INT8OID, INT4OID};
	Datum		values[2];
	FencingUserContext uctx;
	MemoryContext caller = CurrentMemoryContext;
	List	   *scopes = NIL;

	values[0] = Int64GetDatum(band_floor);
	values[1] = Int32GetDatum(max_scopes);
	fencing_spi_connect_as_owner(&uctx);
	fencing_spi_execute(&plan, sql, 2, argtypes, values, true);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *scope = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		MemoryContext spi = MemoryContextSwitchTo(caller);

		scopes = lappend(scopes, pstrdup(scope));
		MemoryContextSwitchTo(spi);
	}
	fencing_spi_finish_as_owner(&uctx);
	return scopes;
}

/*
 * fencing.fence_older_timelines(max_scopes integer DEFAULT 1000) returns bigint
 * Lifts the mark of up to max_scopes 'issued' scopes below the floor of this
 * server's timeline to the floor; returns how many it lifted (0 on timeline
 * 1, whose floor is 0).  Each as a raise by its owner: the owner's privilege
 * (or a superuser's), checked before the lock; the exclusive scope lock
 * (waits for the scope's in-flight writers); the mark and kind read again
 * under it (a term issued meanwhile is above the floor already); a durable
 * commit.  The locks are held to the end of the transaction, hence the
 * bound: call it again until it returns 0.
 */
FENCING_FUNCTION(fencing_fence_older_timelines);

Datum
fencing_fence_older_timelines(PG_FUNCTION_ARGS)
{
	int32		max_scopes;
	int64		band_floor;
	int64		tli;
	int64		lifted = 0;
	ListCell   *lc;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("max_scopes must not be null")));
	max_scopes = PG_GETARG_INT32(0);
	if (max_scopes < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_scopes must be at least 1"),
				 errdetail("max_scopes was %d.", max_scopes)));
	PreventCommandIfReadOnly("fence_older_timelines()");

	/*
	 * The band the next term is issued in; the clock's move claimed now if
	 * it moves (its floor, later by the time since the claim it moves from,
	 * would be higher at every call).
	 */
	tli = term_band_timeline();
	band_floor = term_band_floor(tli, clock_band_for_fencing(tli));
	if (band_floor == 0)
		PG_RETURN_INT64(0);

	foreach(lc, scopes_below(band_floor, max_scopes))
	{
		const char *scope = (const char *) lfirst(lc);
		ScopeInfo	info;
		int64		mark;

		/* rights: the owner's, before any lock */
		scope_acl_require(scope, SCOPE_PRIV_OWNER, GetUserId(), SCOPE_MISSING_OK, &info);
		mark = scope_mark_lock_exclusive(scope, SCOPE_MISSING_OK, SCOPE_PRIV_OWNER, NULL);
		if (!scope_info_read(scope, &info) || !info.issued || mark == SCOPE_MARK_NONE ||
			mark >= band_floor)
			continue;
		scope_mark_store(scope, band_floor);
		lifted++;
	}
	PG_RETURN_INT64(lifted);
}
