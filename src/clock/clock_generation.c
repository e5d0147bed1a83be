/*-------------------------------------------------------------------------
 *
 * clock_generation.c
 *	  The clock's generation: no term is issued twice when a database moves
 *	  to another cluster (pg_upgrade, dump and restore, a copy) and fails
 *	  over there.
 *
 * Terms are banded by timeline (clock/term_band.c), which protects them only
 * while timelines grow.  pg_upgrade, pg_dump/pg_restore and logical copies
 * start a new cluster on timeline 1 with the terms copied; its standby,
 * promoted to timeline 2, would issue in a band the old cluster already
 * used.  So the band is G + T - 1 for timeline T and a generation G kept in
 * fencing.clock (one row: dumped with the extension's data, copied by
 * pg_upgrade, replicated) that only grows.
 *
 * Each row of fencing.clock is a claim: who issued in which band, named by
 * the system identifier, the database, the OID of fencing.clock itself and
 * the timeline.  The latest claim (highest generation, band offset,
 * timeline) is in force.  Every term issued reads the claims (a fresh
 * snapshot) and compares; when the latest is this server's on this timeline
 * (the fast path: no lock but the table's AccessShareLock, no write), the
 * term is issued in its band.  When the server is not the claimer (another
 * system identifier: pg_upgrade, a restore into a new cluster, a base backup
 * made a new cluster; another database or clock table: a restore into a new
 * database of the same cluster, CREATE DATABASE ... TEMPLATE; a timeline
 * below the claimed one), the issuing transaction claims the clock: it
 * moves the generation to
 *     max(G_claim + T_claim (+ 1 when its bands are shifted, below),
 *         band of the highest term known + 1) + 16
 * (the source may have gone on for up to 16 timelines after the dump or the
 * copy), its floor shifted by the microseconds since the claim was made, or
 * since 2000-01-01 with terms but no claim (of two moves from one claim,
 * the later one is above the terms the earlier one issued: a dump of a hot
 * standby that lagged its primary's own move), and inserts its claim, made
 * durable with the term.  A claim by the same
 * server on a higher timeline (a promotion) keeps the generation and moves
 * the band later by the microseconds from the claim in force to the
 * promotion (when it wrote its timeline's history file, not its first term,
 * which may come much later), and dates its claim at the promotion: of two standbys
 * promoted from one claim onto the same timeline (Postgres picks timeline +
 * 1 from the history each one sees; without a shared WAL archive the second
 * never saw the first's), the later one issues above what the earlier one
 * issued, and every timeline's floor stays above the band of the timeline
 * below it, also when that one claims it only after the higher one issued
 * (a server promoted and idle while its cascading standby was promoted: a
 * timeline is promoted after the one it comes from, so its shift is not
 * smaller).
 *
 * The new band depends only on the data and the time, not on the
 * claimer's timeline: a standby of the new cluster that missed the claim
 * computes the same band or a later one and, on its higher timeline, issues
 * above it.  So does a concurrent claimer: the claim and the terms are read
 * with one snapshot, and two transactions that claim at once insert nearly
 * the same band, the later claim in force.  No claim waits for another (one
 * left open in a transaction would stall every scope's takeover); no claim
 * row is ever updated or deleted (a few rows a year: moves, promotions,
 * confirmations).
 *
 * What no data can tell: a copy of the data directory itself (a file-system
 * snapshot, a VM snapshot, a base backup started without recovery) keeps the
 * system identifier, the database and the timeline, and after it the copy
 * issues again what the original issued after the copy was made.  Such a
 * copy starts like a crash.  With the library preloaded, the postmaster
 * reads pg_control before recovery: when it was not shut down cleanly and
 * the server starts by crash recovery (not as a standby, not in archive
 * recovery: those end in a promotion onto a new timeline), the clock is
 * "unconfirmed" until a superuser calls fencing.confirm_clock(), which moves
 * the generation above every band the original could have used.  With
 * fencing.clock_unclean_start = 'confirm' an unconfirmed clock refuses to
 * issue (ZF006); with 'issue' (the default: a crash is far more common than
 * a snapshot restore) it issues and fencing.health warns.
 *
 *-------------------------------------------------------------------------
 */
#include "clock/clock_generation.h"

#include <sys/stat.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "catalog/pg_control.h"
#include "catalog/pg_type.h"
#include "common/controldata_utils.h"
#include "common/int.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "clock/term_band.h"
#include "durability/durable_commit.h"
#include "state/extension_state.h"
#include "telemetry/rejection.h"

/* fencing.clock's columns */
#define Anum_clock_generation			1
#define Anum_clock_band_offset			2
#define Anum_clock_system_identifier	3
#define Anum_clock_database_oid			4
#define Anum_clock_clock_oid			5
#define Anum_clock_timeline				6
#define Anum_clock_claimed_at			7
#define Anum_clock_reason				8
#define Anum_clock_confirmed_start		9
#define Natts_clock						9

/* fencing.clock_unclean_start */
typedef enum ClockUncleanStart
{
	CLOCK_UNCLEAN_ISSUE,
	CLOCK_UNCLEAN_CONFIRM
} ClockUncleanStart;

static const struct config_enum_entry unclean_start_options[] = {
	{"issue", CLOCK_UNCLEAN_ISSUE, false},
	{"confirm", CLOCK_UNCLEAN_CONFIRM, false},
	{NULL, 0, false}
};

static int	clock_unclean_start = CLOCK_UNCLEAN_ISSUE;

/* fencing.clock_promotion: the same choice after a promotion since the start */
static int	clock_promotion = CLOCK_UNCLEAN_ISSUE;

/*
 * What the postmaster found before recovery (preloaded only; backends
 * inherit it): whether pg_control says the data directory was shut down
 * cleanly, and whether it starts as a standby or in archive recovery (a
 * signal file), whose end is a promotion onto a new timeline.
 */
static bool start_known = false;
static bool start_unclean = false;
static bool start_in_archive_recovery = false;

/* The row of fencing.clock, as read. */
typedef struct ClockRow
{
	bool		found;
	TermBand	band;
	int64		system_identifier;
	Oid			database_oid;
	Oid			clock_oid;
	int64		timeline;
	TimestampTz claimed_at;
	char	   *reason;
	bool		confirmed;		/* confirmed_start is this postmaster's start */
} ClockRow;

/* How the server stands to the row. */
typedef enum ClockVerdict
{
	CLOCK_UNCLAIMED,			/* no row: no term issued since 1.5 */
	CLOCK_CLAIMED_HERE,			/* this server, this timeline */
	CLOCK_NEW_TIMELINE,			/* this server, a higher timeline */
	CLOCK_MOVES					/* another server, database or clock table,
								 * or a lower timeline */
} ClockVerdict;

static const char *const verdict_names[] = {
	"unclaimed", "claimed", "new timeline", "moves"
};

/* Whether the data directory has the signal file "name". */
static bool
start_signal_file(const char *name)
{
	char		path[MAXPGPATH];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", DataDir, name);
	return stat(path, &st) == 0;
}

void
clock_generation_init(void)
{
	DefineCustomEnumVariable("fencing.clock_unclean_start",
							 "What the epoch clock does after the server started from a data directory not shut down cleanly.",
							 "issue: issue terms (fencing.health warns until fencing.confirm_clock()); "
							 "confirm: refuse to issue terms (ZF006) until a superuser calls fencing.confirm_clock(). "
							 "Known only with fencing in shared_preload_libraries.",
							 &clock_unclean_start,
							 CLOCK_UNCLEAN_ISSUE,
							 unclean_start_options,
							 PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("fencing.clock_promotion",
							 "What the epoch clock does after this server was promoted (or ended an archive recovery) since it started.",
							 "issue: issue terms in the new timeline's band; "
							 "confirm: refuse to issue terms (ZF006) until a superuser calls fencing.confirm_clock(), for a standby that may "
							 "have missed a confirmation of the clock by its primary. "
							 "Known only with fencing in shared_preload_libraries.",
							 &clock_promotion,
							 CLOCK_UNCLEAN_ISSUE,
							 unclean_start_options,
							 PGC_SIGHUP, 0,
							 NULL, NULL, NULL);

	if (process_shared_preload_libraries_in_progress && !IsUnderPostmaster)
	{
		bool		crc_ok = false;
		ControlFileData *control = get_controlfile(DataDir, &crc_ok);

		if (crc_ok)
		{
			start_known = true;
			start_unclean = control->state != DB_SHUTDOWNED &&
				control->state != DB_SHUTDOWNED_IN_RECOVERY;
		}
		pfree(control);
		start_in_archive_recovery =
			start_signal_file(STANDBY_SIGNAL_FILE) || start_signal_file(RECOVERY_SIGNAL_FILE);
	}
}

/* Whether claim a is later than claim b: generations and bands only grow. */
static bool
clock_claim_later(const ClockRow *a, const ClockRow *b)
{
	if (a->band.generation != b->band.generation)
		return a->band.generation > b->band.generation;
	if (a->band.offset != b->band.offset)
		return a->band.offset > b->band.offset;
	if (a->timeline != b->timeline)
		return a->timeline > b->timeline;
	return a->claimed_at > b->claimed_at;
}

/*
 * The latest claim of fencing.clock ("rel", opened by the caller) as
 * "snapshot" sees it: every row is a claim, and the latest is the one in
 * force.
 */
static void
clock_read(Relation rel, Snapshot snapshot, ClockRow *row)
{
	TableScanDesc scan;
	HeapTuple	tup;

	memset(row, 0, sizeof(*row));
	if (RelationGetDescr(rel)->natts != Natts_clock)
		elog(ERROR, "fencing.clock does not have the columns of this library's clock");
	scan = table_beginscan(rel, snapshot, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[Natts_clock];
		bool		nulls[Natts_clock];
		ClockRow	claim;

		heap_deform_tuple(tup, RelationGetDescr(rel), values, nulls);
		claim.found = true;
		claim.band.generation = DatumGetInt64(values[Anum_clock_generation - 1]);
		claim.band.offset = DatumGetInt64(values[Anum_clock_band_offset - 1]);
		claim.system_identifier = DatumGetInt64(values[Anum_clock_system_identifier - 1]);
		claim.database_oid = DatumGetObjectId(values[Anum_clock_database_oid - 1]);
		claim.clock_oid = DatumGetObjectId(values[Anum_clock_clock_oid - 1]);
		claim.timeline = DatumGetInt64(values[Anum_clock_timeline - 1]);
		claim.claimed_at = DatumGetTimestampTz(values[Anum_clock_claimed_at - 1]);
		claim.reason = NULL;
		claim.confirmed = !nulls[Anum_clock_confirmed_start - 1] &&
			DatumGetTimestampTz(values[Anum_clock_confirmed_start - 1]) == PgStartTime;
		if (!row->found || clock_claim_later(&claim, row))
		{
			*row = claim;
			row->reason = TextDatumGetCString(values[Anum_clock_reason - 1]);
		}
	}
	table_endscan(scan);
}

static ClockVerdict
clock_verdict(Relation rel, const ClockRow *row, int64 tli)
{
	if (!row->found)
		return CLOCK_UNCLAIMED;
	if (row->system_identifier != (int64) GetSystemIdentifier() ||
		row->database_oid != MyDatabaseId ||
		row->clock_oid != RelationGetRelid(rel) ||
		tli < row->timeline)
		return CLOCK_MOVES;
	if (tli > row->timeline)
		return CLOCK_NEW_TIMELINE;
	return CLOCK_CLAIMED_HERE;
}

/*
 * The server cannot tell whether it is a copy of the data directory: it
 * started from one not shut down cleanly, by crash recovery.  A start as a
 * standby or in archive recovery ends in a promotion, onto a timeline and
 * so a band of its own.  Not the timeline of pg_control's checkpoint: a copy
 * made right after a promotion, before its checkpoint, names the timeline
 * before it, and its crash recovery ends on the promoted one, where the
 * original went on issuing.
 *
 * Nor can a server promoted since it started tell that it replayed every
 * confirmation of the clock its primary made: one it missed leaves it
 * issuing below the confirmed band.  (Another standby of the same primary,
 * promoted before it onto the same timeline and lost, is below it by the
 * promotion's shift, clock_promoted_band().)  With
 * fencing.clock_promotion = 'confirm' the operator asks to confirm that too.
 *
 * NULL if neither; *refuse: the setting asks to refuse terms until a
 * superuser confirms (fencing.confirm_clock(), which moves the band above
 * every band these could have used); *setting: its name.
 */
static const char *
clock_unconfirmed_reason(const ClockRow *row, bool *refuse, const char **setting)
{
	*refuse = false;
	*setting = NULL;
	if (!start_known || RecoveryInProgress() || (row->found && row->confirmed))
		return NULL;
	if (start_unclean && !start_in_archive_recovery)
	{
		*refuse = clock_unclean_start == CLOCK_UNCLEAN_CONFIRM;
		*setting = "fencing.clock_unclean_start";
		return "The server started from a data directory that was not shut down cleanly: after a crash, or restored from a file-system snapshot or copy.";
	}
	if (start_in_archive_recovery && clock_promotion == CLOCK_UNCLEAN_CONFIRM)
	{
		*refuse = true;
		*setting = "fencing.clock_promotion";
		return "The server was promoted since it started: another standby may have been promoted onto the same timeline before it, or it may not have replayed a confirmation of the clock.";
	}
	return NULL;
}

/*
 * The highest term known to be issued by the clock: the largest latest term
 * of any scope of issued tokens (fencing.scopes.epoch, written only with a
 * term, above every term of its scope in fencing.terms; scopes are never
 * deleted); -1 when none.  A scope of external tokens is left out: its
 * tokens are a lock service's, any number its owner chooses (2^63 - 2 would
 * leave no band for any scope after the next move), and the bands protect
 * no term above them.  Read as the extension's owner, one pass over the
 * scopes (only when the clock moves, or is shown).
 *
 * With scope, also that scope's own mark and latest term (*in_scope, -1
 * when it has none or does not exist), of either kind of tokens.
 */
static void
clock_known_tokens(Snapshot snapshot, const char *scope, int64 *issued, int64 *in_scope)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"SELECT (SELECT pg_catalog.max(s.epoch) FROM fencing.scopes AS s"
		"         WHERE s.tokens OPERATOR(pg_catalog.=) 'issued'),"
		"       (SELECT GREATEST(s.mark, s.epoch) FROM fencing.scopes AS s"
		"         WHERE s.scope OPERATOR(pg_catalog.=) $1)";
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {scope != NULL ? CStringGetTextDatum(scope) : (Datum) 0};
	char		nulls[1] = {scope != NULL ? ' ' : 'n'};
	FencingUserContext uctx;
	bool		isnull;
	Datum		d;

	*issued = -1;
	*in_scope = -1;
	fencing_spi_connect_as_owner(&uctx);
	if (SPI_execute_snapshot(fencing_saved_plan(&plan, sql, 1, argtypes), values, nulls,
							 snapshot, InvalidSnapshot, true, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "\"%s\" failed", sql);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		*issued = DatumGetInt64(d);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	if (!isnull)
		*in_scope = DatumGetInt64(d);
	fencing_spi_finish_as_owner(&uctx);
}

static int64
clock_highest_term(Snapshot snapshot)
{
	int64		issued;
	int64		in_scope;

	clock_known_tokens(snapshot, NULL, &issued, &in_scope);
	return issued;
}

/*
 * A move leaves this many timelines above the bands the data shows used, as
 * confirm_clock() does by default: the source may have gone on after the
 * dump or the copy (promoted since its last term, failed over and issued on
 * higher timelines) before it was retired.
 */
#define CLOCK_MOVE_LOST_TIMELINES	16

/*
 * The first generation above every band the data shows used: the bands the
 * claimer of the row reached on its timeline (one more when its band is
 * shifted), and the band of the highest term known.  -1 when neither: no
 * term was issued since the install.  A row past the last band (a
 * generation or timeline written by hand) gives TERM_BAND_COUNT + 1, which
 * has no band (ZF004), rather than a sum that wraps around to a low band.
 */
static int64
clock_generation_after_used(const ClockRow *row, Snapshot snapshot)
{
	int64		highest = clock_highest_term(snapshot);
	int64		generation = -1;

	if (row->found && (row->band.generation > TERM_BAND_COUNT ||
					   row->timeline > TERM_BAND_COUNT))
		generation = TERM_BAND_COUNT + 1;
	else if (row->found)
		generation = row->band.generation + row->timeline +
			(row->band.offset > 0 ? 1 : 0);
	if (highest >= 0)
		generation = Max(generation, term_band_of(highest) + 1);
	return generation;
}

/*
 * Microseconds from "since" to now, 0 when the clock is behind it; past the
 * range (a claim at -infinity, written by hand) PG_INT64_MAX, for which
 * clock_band_beyond() finds no band.
 */
static int64
clock_elapsed_since(TimestampTz since)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		elapsed;

	if (now <= since)
		return 0;
	if (pg_sub_s64_overflow(now, since, &elapsed))
		return PG_INT64_MAX;
	return elapsed;
}

/*
 * The band a move or a confirmation claims: lost_timelines generations above
 * "generation", then later by "elapsed", the microseconds since the row
 * was claimed.  Of two claims from one row, the later one's floor is then above
 * every term the earlier one's server issued on the same timeline before
 * it: at most one a microsecond, each term being a durable commit (the
 * servers' clocks assumed to agree that closely).  The band is the same on
 * every timeline (timeline T issues from its floor plus T - 1 bands), so a
 * standby of the new cluster that missed the claim and is promoted later
 * issues above it.
 *
 * When there is no such band: ZF004, or with missing_ok (a band only shown:
 * clock_state(), clock_timeline() and so fencing.health) the generation it
 * would be, which term_band_exists() says has no band.
 */
static TermBand
clock_band_beyond(int64 tli, int64 generation, int32 lost_timelines, int64 elapsed,
				  bool missing_ok)
{
	TermBand	band = {0, 0};
	int64		floor;

	band.generation = generation + lost_timelines;
	if (!term_band_exists(tli, band))
	{
		if (!missing_ok)
			fence_reject_no_band(tli, band.generation, TERM_BAND_COUNT);
		return band;
	}
	floor = band.generation << TERM_BAND_COUNTER_BITS;
	if (elapsed > PG_INT64_MAX - floor)
	{
		band.generation += term_band_of(elapsed);
		if (!missing_ok)
			fence_reject_no_band(tli, band.generation, TERM_BAND_COUNT);
		return band;
	}
	floor += elapsed;
	band.generation = term_band_of(floor);
	band.offset = floor & (((int64) 1 << TERM_BAND_COUNTER_BITS) - 1);
	return band;
}

/*
 * The band a claim moves to: above every band the data shows used and
 * CLOCK_MOVE_LOST_TIMELINES more, later by the time since the row's claim.
 * With terms but no claim (a 1.4 install moved here and updated, a 1.4 dump
 * restored into 1.5, the rows deleted by hand) the time is counted from the
 * start of the timestamps, as confirm_clock() does: two moves from that
 * data (the original's first term, and a copy made before it: a dump of a
 * hot standby that lagged it, CREATE DATABASE ... TEMPLATE) are then ordered
 * too, rather than claiming the same band.  Generation 0 when nothing was
 * issued since the install (a fresh clock).
 */
static TermBand
clock_moved_band(const ClockRow *row, Snapshot snapshot, int64 tli, bool missing_ok)
{
	int64		generation = clock_generation_after_used(row, snapshot);
	TermBand	band = {0, 0};

	if (generation < 0)
		return band;
	return clock_band_beyond(tli, generation, CLOCK_MOVE_LOST_TIMELINES,
							 clock_elapsed_since(row->found ? row->claimed_at : 0),
							 missing_ok);
}

/*
 * When this server's timeline began: when its promotion (or the end of its
 * archive recovery) wrote the timeline's history file, pg_wal/TLI.history,
 * just before the timeline's first record.  Postgres never rewrites or
 * removes that file, and only the server that chose the timeline writes it
 * there (a standby that fetches a history file is on a later timeline by the
 * time it can issue).  Its modification time, to the microsecond where the
 * file system keeps it; 0 when it is not known (timeline 1, a standby, no
 * file).  Read once a backend and timeline.
 */
static TimestampTz
clock_timeline_began(int64 tli)
{
	static int64 read_tli = 0;
	static TimestampTz began = 0;
	char		path[MAXPGPATH];
	struct stat st;

	if (tli == read_tli)
		return began;
	if (tli < 2 || tli > PG_UINT32_MAX || RecoveryInProgress())
		return 0;
	TLHistoryFilePath(path, (TimeLineID) tli);
	began = 0;
	if (stat(path, &st) == 0 && st.st_mtime > 0)
		began = time_t_to_timestamptz((pg_time_t) st.st_mtim.tv_sec) +
			st.st_mtim.tv_nsec / 1000;
	read_tli = tli;
	return began;
}

/*
 * The band a promotion claims: the band in force, later by the
 * microseconds from its claim to the promotion (the start of this
 * timeline, clock_timeline_began(); when that is not known, to now).  The
 * promotion's claim records that time as its claimed_at: the floor of
 * every band is then the floor of the claim in force plus the time since
 * its claimed_at, whoever computes it and whenever.  Timeline T then issues from that
 * floor, which is above the limit of timeline T - 1's band in force (its
 * floor plus one band): the old primary, confined to its band, stays below.
 * Of two standbys promoted from the same claim onto the same timeline, the
 * later one's floor is above every term the earlier one issued before it,
 * at most one a microsecond, the servers' clocks assumed to agree that
 * closely (as for two moves from one claim).  When there is no such band:
 * ZF004, or with missing_ok the band, which term_band_exists() rejects.
 */
static TermBand
clock_promoted_band(const ClockRow *row, int64 tli, bool missing_ok, TimestampTz *until)
{
	TermBand	band = row->band;
	TimestampTz began = clock_timeline_began(tli);
	int64		elapsed;
	int64		floor;

	/* from the claim to the promotion; to now when the promotion's time is not known */
	if (began == 0)
		began = GetCurrentTimestamp();
	if (began <= row->claimed_at)
	{
		began = row->claimed_at;
		elapsed = 0;
	}
	else if (pg_sub_s64_overflow(began, row->claimed_at, &elapsed))
		elapsed = PG_INT64_MAX;
	if (until != NULL)
		*until = began;

	if (term_band_exists(tli, band))
	{
		floor = (band.generation << TERM_BAND_COUNTER_BITS) + band.offset;
		if (elapsed > PG_INT64_MAX - floor)
			band.generation = TERM_BAND_COUNT + 1;
		else
		{
			floor += elapsed;
			band.generation = term_band_of(floor);
			band.offset = floor & (((int64) 1 << TERM_BAND_COUNTER_BITS) - 1);
		}
	}
	if (!missing_ok && !term_band_exists(tli, band))
		fence_reject_no_band(tli, band.generation, TERM_BAND_COUNT);
	return band;
}

/*
 * Insert a claim: by this server (ours), or by an unknown one (system
 * identifier, database and clock 0) at the start of the timestamps.  A row
 * of its own: no claim waits for another.
 */
static void
clock_insert(Oid clock_oid, TermBand band, int64 tli, const char *reason, bool confirmed,
			 bool ours, TimestampTz claimed_at)
{
	static SPIPlanPtr insert_plan = NULL;
	static const char *insert_sql =
		"INSERT INTO fencing.clock (generation, band_offset, system_identifier, database_oid,"
		" clock_oid, timeline, claimed_at, reason, confirmed_start)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
	Oid			argtypes[9] = {INT8OID, INT8OID, INT8OID, OIDOID, OIDOID, INT8OID,
	TIMESTAMPTZOID, TEXTOID, TIMESTAMPTZOID};
	Datum		values[9];
	char		nulls[9] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', confirmed ? ' ' : 'n'};
	FencingUserContext uctx;
	int			rc;

	(void) term_band_index(tli, band.generation);	/* ZF004 before writing */
	values[0] = Int64GetDatum(band.generation);
	values[1] = Int64GetDatum(band.offset);
	values[2] = Int64GetDatum(ours ? (int64) GetSystemIdentifier() : 0);
	values[3] = ObjectIdGetDatum(ours ? MyDatabaseId : InvalidOid);
	values[4] = ObjectIdGetDatum(ours ? clock_oid : InvalidOid);
	values[5] = Int64GetDatum(tli);
	values[6] = TimestampTzGetDatum(ours ? claimed_at : 0);
	values[7] = CStringGetTextDatum(reason);
	values[8] = TimestampTzGetDatum(PgStartTime);

	fencing_spi_connect_as_owner(&uctx);
	rc = SPI_execute_snapshot(fencing_saved_plan(&insert_plan, insert_sql, 9, argtypes),
							  values, nulls, GetLatestSnapshot(), InvalidSnapshot,
							  false, true, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "\"%s\" failed: %s", insert_sql, SPI_result_code_string(rc));
	fencing_spi_finish_as_owner(&uctx);
	CommandCounterIncrement();
	fencing_require_durable_commit();
}

/* Record a claim by this server. */
static void
clock_write(Oid clock_oid, TermBand band, int64 tli, const char *reason, bool confirmed)
{
	clock_insert(clock_oid, band, tli, reason, confirmed, true, GetCurrentTimestamp());
}

static const char *
claim_reason(Relation rel, const ClockRow *row, int64 tli)
{
	if (!row->found)
		return "first term";
	if (row->system_identifier != (int64) GetSystemIdentifier())
		return "new system identifier";
	if (row->database_oid != MyDatabaseId || row->clock_oid != RelationGetRelid(rel))
		return "new database";
	if (tli < row->timeline)
		return "lower timeline";
	return "new timeline";
}

TermBand
clock_band_for_issue(int64 tli)
{
	Oid			clock_oid = fencing_clock_relid_if_installed();
	Relation	rel;
	ClockRow	row;
	ClockVerdict verdict;
	const char *unconfirmed;
	bool		refuse;
	const char *setting;
	TermBand	band = {0, 0};
	Snapshot	snapshot;

	if (!OidIsValid(clock_oid))
		return band;			/* SQL older than 1.5: bands by timeline only */

	/*
	 * The claim and the terms known are read with one snapshot: a claim
	 * committed after it is seen by neither, so the generation computed is
	 * that claim's, never one above it.
	 */
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	rel = table_open(clock_oid, AccessShareLock);
	clock_read(rel, snapshot, &row);
	verdict = clock_verdict(rel, &row, tli);

	unconfirmed = clock_unconfirmed_reason(&row, &refuse, &setting);
	if (unconfirmed != NULL && refuse)
		fence_reject_clock_unconfirmed(tli, unconfirmed, setting);

	switch (verdict)
	{
		case CLOCK_CLAIMED_HERE:
			band = row.band;
			break;
		case CLOCK_NEW_TIMELINE:
			{
				TimestampTz promoted_at;

				band = clock_promoted_band(&row, tli, false, &promoted_at);
				clock_insert(clock_oid, band, tli, claim_reason(rel, &row, tli), row.confirmed,
							 true, promoted_at);
			}
			break;
		case CLOCK_UNCLAIMED:
		case CLOCK_MOVES:
		default:
			/* a confirmation of this start holds across the move */
			band = clock_moved_band(&row, snapshot, tli, false);
			clock_write(clock_oid, band, tli, claim_reason(rel, &row, tli),
						row.found && row.confirmed);
			break;
	}
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return band;
}

/*
 * The band the next term on timeline tli would be issued in; one that does
 * not exist (term_band_exists()) when a move would find none (ZF004).
 */
static TermBand
clock_band_peek_row(Relation rel, const ClockRow *row, Snapshot snapshot, int64 tli,
					ClockVerdict *verdict)
{
	*verdict = clock_verdict(rel, row, tli);
	if (*verdict == CLOCK_CLAIMED_HERE)
		return row->band;
	if (*verdict == CLOCK_NEW_TIMELINE)
		return clock_promoted_band(row, tli, true, NULL);
	return clock_moved_band(row, snapshot, tli, true);
}

/* The band of the next term on timeline tli, and how the server stands to the claim. */
static TermBand
clock_band_peek_verdict(int64 tli, ClockVerdict *verdict)
{
	Oid			clock_oid = fencing_clock_relid_if_installed();
	Relation	rel;
	ClockRow	row;
	TermBand	band = {0, 0};
	Snapshot	snapshot;

	*verdict = CLOCK_UNCLAIMED;
	if (!OidIsValid(clock_oid))
		return band;
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	rel = table_open(clock_oid, AccessShareLock);
	clock_read(rel, snapshot, &row);
	band = clock_band_peek_row(rel, &row, snapshot, tli, verdict);
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return band;
}

/*
 * The bands a clock reaches by its own terms, moves and confirmations
 * (about 17 a move, one per 12.7 days since 2000: a few thousand in this
 * century) are far below half of them; a token past that is a lock
 * service's number, which would use up the bands left.
 */
#define CLOCK_UNKNOWN_TERMS_BANDS	(TERM_BAND_COUNT / 2)

/*
 * Tokens this clock never issued, found in rows written without the
 * extension's data (trigger/restored_fence.c): a table whose fence a
 * superuser's restore made (pg_dump -n, -t, into a database whose clock
 * and scopes know nothing of the source), a row a logical replication copy
 * brought.  "token" is the highest token seen; "scope", the table's own
 * scope if it names one (else NULL).  When the token is above every term
 * of the scopes of issued tokens and above the mark and latest term of
 * that scope (a scope of external tokens holds a lock service's numbers:
 * the table's own may cover its rows, another one must not hide them), and
 * not in the band of an unknown server's claim in force, it is recorded as
 * a claim by an unknown server (system identifier 0) on timeline 1, in its
 * band or above the claim in force, claimed at the start of the
 * timestamps: the next term then moves above it, CLOCK_MOVE_LOST_TIMELINES
 * more, later by the time since 2000-01-01, as from terms with no claim.
 * Nothing is written when the move would reach past half of the bands (a
 * lock service's tokens, 2^62 and above: the claim would use up the bands
 * of every later move).  Returns the generation claimed, or -1; *covered:
 * the highest token the clock now knows below its next term whatever the
 * scope (the issued terms, the band of an unknown server's claim in force),
 * for a caller that skips the tokens below it.  A token of 0 is a table with
 * no token: noted as token 1 only while the clock has no row (this database
 * has issued no term since 1.5, whatever its scopes now say).
 */
int64
clock_note_unknown_terms(int64 token, const char *scope, int64 *covered)
{
	Oid			clock_oid = fencing_clock_relid_if_installed();
	int64		tli = term_band_timeline();
	Relation	rel;
	ClockRow	row;
	Snapshot	snapshot;
	TermBand	claim = {0, 0};
	int64		highest;
	int64		in_scope;
	int64		claimed = -1;
	bool		no_token = (token == 0);

	*covered = token;
	if (!OidIsValid(clock_oid) || token < 0)
		return -1;
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	rel = table_open(clock_oid, AccessShareLock);
	clock_read(rel, snapshot, &row);
	if (no_token)
	{
		/* terms issued here (the clock has a row): the source's are not needed */
		if (row.found)
		{
			table_close(rel, NoLock);
			UnregisterSnapshot(snapshot);
			*covered = 0;
			return -1;
		}
		token = 1;
	}
	clock_known_tokens(snapshot, scope, &highest, &in_scope);
	/* an unknown server's claim in force covers its band (the next table of a restore) */
	if (row.found && row.system_identifier == 0 && row.band.generation < CLOCK_UNKNOWN_TERMS_BANDS)
		*covered = Max(highest, ((row.band.generation + 1) << TERM_BAND_COUNTER_BITS) - 1);
	else
		*covered = highest;
	if (token > *covered && token > in_scope)
	{
		claim.generation = term_band_of(token);
		if (row.found)
			claim.generation = Max(claim.generation, clock_generation_after_used(&row, snapshot));
		/* a confirmation of this start holds, as across a move */
		if (claim.generation < CLOCK_UNKNOWN_TERMS_BANDS &&
			clock_band_beyond(tli, claim.generation + 1, CLOCK_MOVE_LOST_TIMELINES,
							  clock_elapsed_since(0), true).generation + tli < CLOCK_UNKNOWN_TERMS_BANDS)
		{
			clock_insert(clock_oid, claim, 1,
						 "tokens restored above every term known (a fence restored without the extension's data)",
						 row.found && row.confirmed, false, 0);
			claimed = claim.generation;
			*covered = ((claim.generation + 1) << TERM_BAND_COUNTER_BITS) - 1;
		}
	}
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);
	return claimed;
}

TermBand
clock_band_peek(int64 tli)
{
	ClockVerdict verdict;

	return clock_band_peek_verdict(tli, &verdict);
}

TermBand
clock_band_for_fencing(int64 tli)
{
	ClockVerdict verdict;
	TermBand	band = clock_band_peek_verdict(tli, &verdict);

	/*
	 * a move's floor goes on moving with the time until it is claimed, as
	 * does a promotion's whose time is not known
	 */
	if (verdict == CLOCK_NEW_TIMELINE ||
		((verdict == CLOCK_MOVES || verdict == CLOCK_UNCLAIMED) &&
		 (band.generation != 0 || band.offset != 0)))
		band = clock_band_for_issue(tli);
	return band;
}

/*
 * fencing.clock_state() returns one row: the clock as this server sees it.
 *   state: unclaimed (no term issued since 1.5), claimed (by this server on
 *   this timeline), new timeline (this server, promoted since: the next term
 *   records it), moves (claimed by another server, database or clock table,
 *   or a higher timeline: the next term moves the generation), or, before
 *   any of those, awaits confirmation / unconfirmed (the server started
 *   from a data directory not shut down cleanly and issues on the timeline
 *   it started on: fencing.clock_unclean_start is 'confirm' / 'issue').
 *   generation, band_offset, term_floor, term_limit: the band the next term
 *   is issued in; claimed_*: who claimed the row of fencing.clock.
 */
FENCING_FUNCTION(fencing_clock_state);

Datum
fencing_clock_state(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[11];
	bool		nulls[11] = {0};
	Oid			clock_oid = fencing_clock_relid_if_installed();
	int64		tli = term_band_timeline();
	Relation	rel;
	ClockRow	row;
	ClockVerdict verdict;
	TermBand	band;
	Snapshot	snapshot;
	const char *state;
	bool		refuse;
	const char *setting;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (!OidIsValid(clock_oid))
		elog(ERROR, "fencing.clock does not exist");

	snapshot = RegisterSnapshot(GetLatestSnapshot());
	rel = table_open(clock_oid, AccessShareLock);
	clock_read(rel, snapshot, &row);
	band = clock_band_peek_row(rel, &row, snapshot, tli, &verdict);
	table_close(rel, NoLock);
	UnregisterSnapshot(snapshot);

	state = verdict_names[verdict];
	if (clock_unconfirmed_reason(&row, &refuse, &setting) != NULL)
		state = !refuse ? "unconfirmed" :
			strcmp(setting, "fencing.clock_promotion") == 0 ?
			"awaits confirmation since a promotion" : "awaits confirmation";

	values[0] = CStringGetTextDatum(state);
	values[1] = Int64GetDatum(tli);
	values[2] = Int64GetDatum(band.generation);
	values[3] = Int64GetDatum(band.offset);
	if (term_band_exists(tli, band))
	{
		values[4] = Int64GetDatum(term_band_floor(tli, band));
		values[5] = Int64GetDatum(term_band_limit(tli, band));
	}
	else
		nulls[4] = nulls[5] = true;
	values[6] = Int64GetDatum((int64) GetSystemIdentifier());
	if (row.found)
	{
		values[7] = Int64GetDatum(row.system_identifier);
		values[8] = Int64GetDatum(row.timeline);
		values[9] = TimestampTzGetDatum(row.claimed_at);
		values[10] = CStringGetTextDatum(row.reason);
	}
	else
		nulls[7] = nulls[8] = nulls[9] = nulls[10] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * fencing.confirm_clock(lost_timelines integer DEFAULT 16) returns bigint
 * A superuser's statement that this server may issue terms; the
 * confirmation holds for this start of the postmaster.  Returns the floor of
 * the new band.  Durable.
 *
 * The new band is the one a move claims (clock_band_beyond), with
 * lost_timelines for the margin: above every band the claimer of the row,
 * or a copy of this data directory going on from it, could have used on its
 * timeline and up to lost_timelines timelines above it, and later by the
 * time since the row was claimed (since the start of the timestamps when
 * there is no row).  A copy that moved the generation itself, by a claim or
 * a confirmation from the same row, did so earlier: the copy confirmed after
 * the original stopped issuing is above every term it issued on its
 * timeline.
 */
FENCING_FUNCTION(fencing_confirm_clock);

Datum
fencing_confirm_clock(PG_FUNCTION_ARGS)
{
	Oid			clock_oid;
	Relation	rel;
	ClockRow	row;
	int64		tli;
	TermBand	band;
	int64		generation;
	int32		lost_timelines;
	Snapshot	snapshot;

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to confirm the fencing clock"),
				 errdetail("Only a superuser may confirm the clock.")));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lost_timelines must not be null")));
	lost_timelines = PG_GETARG_INT32(0);
	if (lost_timelines < 0 || lost_timelines > 1024)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lost_timelines must be between 0 and 1024"),
				 errdetail("lost_timelines was %d.", lost_timelines)));
	PreventCommandIfReadOnly("confirm_clock()");
	clock_oid = fencing_clock_relid_if_installed();
	if (!OidIsValid(clock_oid))
		elog(ERROR, "fencing.clock does not exist");

	tli = term_band_timeline();
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	rel = table_open(clock_oid, AccessShareLock);
	clock_read(rel, snapshot, &row);
	generation = clock_generation_after_used(&row, snapshot);
	UnregisterSnapshot(snapshot);

	/*
	 * With no claim and no term, the original would claim on this timeline;
	 * the time is then counted from the start of the timestamps, so that two
	 * such confirmations are ordered too.
	 */
	if (generation < 0)
		generation = tli;
	band = clock_band_beyond(tli, generation, lost_timelines,
							 clock_elapsed_since(row.found ? row.claimed_at : 0), false);
	clock_write(clock_oid, band, tli, "confirmed", true);
	table_close(rel, NoLock);
	PG_RETURN_INT64(term_band_floor(tli, band));
}
