/*-------------------------------------------------------------------------
 *
 * term_band.c
 *	  The band of terms each timeline issues, so that no promotion ever
 *	  hands out a term again.
 *
 * A standby promoted after an asynchronous failover (or a degraded
 * synchronous one, or a point-in-time recovery) has lost the old primary's
 * last commits: its sequence and its latest terms are behind what the old
 * primary handed out, by an amount nobody can know.  But it always ends
 * recovery on a new timeline, higher than every timeline in its history and
 * its archive.  So the clock never issues a term below the floor of the
 * current timeline, (timeline - 1) * 2^40: every term issued on timeline T
 * is above every term the servers of timelines below T issued, as long as
 * those stayed in their own band.  The clock keeps them there: it refuses a
 * term at or above the band's limit (ZF007, clock/epoch_clock.c), so a scope
 * whose mark an external token or a reset pushed to the limit - 1 or beyond
 * gets no term rather than one the next timeline may issue again.
 *
 * That holds while timelines only grow.  pg_upgrade, a restore into a new
 * cluster and a copy start again on timeline 1 with the terms copied: the
 * clock's generation (clock/clock_generation.c) then moves the bands above
 * every band used, and timeline T of generation G issues in band G + T - 1.
 *
 * There are 2^23 bands; past the last the clock refuses to issue (ZF004).
 *
 *-------------------------------------------------------------------------
 */
#include "clock/term_band.h"
#include "clock/clock_generation.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "funcapi.h"
#include "miscadmin.h"

#include "telemetry/rejection.h"

int64
term_band_timeline(void)
{
	TimeLineID	tli;

	if (RecoveryInProgress())
	{
		/* a standby: the timeline it replays; a promotion ends above it */
		(void) GetXLogReplayRecPtr(&tli);
		return (int64) tli;
	}
	tli = GetWALInsertionTimeLine();
	return (int64) tli;
}

int64
term_band_index(int64 tli, int64 generation)
{
	if (tli < 1 || generation < 0 || generation > TERM_BAND_COUNT ||
		generation + tli - 1 >= TERM_BAND_COUNT)
		fence_reject_no_band(tli, generation, TERM_BAND_COUNT);
	return generation + tli - 1;
}

bool
term_band_exists(int64 tli, TermBand band)
{
	return tli >= 1 && band.generation >= 0 && band.generation <= TERM_BAND_COUNT &&
		band.generation + tli - 1 < TERM_BAND_COUNT;
}

int64
term_band_floor(int64 tli, TermBand band)
{
	/* below 2^63: the last band starts at (2^23 - 1) * 2^40 */
	return (term_band_index(tli, band.generation) << TERM_BAND_COUNTER_BITS) + band.offset;
}

int64
term_band_limit(int64 tli, TermBand band)
{
	int64		floor = term_band_floor(tli, band);

	if (floor > PG_INT64_MAX - ((int64) 1 << TERM_BAND_COUNTER_BITS))
		return PG_INT64_MAX;
	return floor + ((int64) 1 << TERM_BAND_COUNTER_BITS);
}

/*
 * fencing.clock_timeline(OUT timeline bigint, OUT term_floor bigint,
 *                        OUT term_limit bigint)
 * The timeline of this server and the band of terms its next term is issued
 * in (in the clock's generation, moved if the next term moves it): terms
 * term_floor to term_limit - 1.  A scope whose mark or latest term is at or
 * above term_limit - 1 is outside the band: its next term would be
 * term_limit or more, which the next timeline issues too after an
 * asynchronous failover, so the clock refuses it (ZF007).
 */
FENCING_FUNCTION(fencing_clock_timeline);

Datum
fencing_clock_timeline(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	int64		tli = term_band_timeline();
	TermBand	band;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum(tli);
	band = clock_band_peek(tli);
	if (term_band_exists(tli, band))
	{
		values[1] = Int64GetDatum(term_band_floor(tli, band));
		values[2] = Int64GetDatum(term_band_limit(tli, band));
	}
	else
		nulls[1] = nulls[2] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
