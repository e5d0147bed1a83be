/*-------------------------------------------------------------------------
 *
 * restored_fence.c
 *	  A fence restored without the extension's data, or a table copied by
 *	  logical replication, moves the epoch clock above the tokens its rows
 *	  carry.
 *
 * A dump of the application's schema alone (pg_dump -n app, -t), restored
 * into a database that has the extension but not the source's clock and
 * scopes, brings the fence's triggers back with rows written under the
 * source's terms.  The restored clock knows none of them: its first term
 * would be issued again below them, and the source's later terms too.  The
 * rows themselves tell: the highest token they carry is a term (or a lock
 * service's token) of the source.
 *
 * So after each CREATE TRIGGER of the fence's row trigger, and each ALTER
 * TABLE ... ENABLE TRIGGER that enables one (ALL, USER or its name: a
 * data-only restore with --disable-triggers, into a schema that has its
 * fence already, ends each table's rows with ENABLE TRIGGER ALL), that a
 * superuser ran by hand (a restore: pg_restore and psql run the dump's
 * statements, also as the table's owner under the superuser's SET SESSION
 * AUTHORIZATION or SET ROLE; protect() creates its triggers as the table's
 * owner in a security-restricted operation, Citus over its own
 * connections, and a partition's cloned trigger has a parent), the table's
 * rows, every partition's (not another session's temporary inheritance
 * child), are read once for their highest token, and when it is above
 * every term of the database's scopes of issued tokens and the mark of the
 * table's own scope, the clock records it as a claim by an unknown server
 * (clock_note_unknown_terms()): the next term moves above it, as after a
 * restore of the whole database.  A table with no token at all, restored
 * into a database that has issued no term, is recorded the same way as
 * token 1: the source's terms are unknown, and the move's floor (the time
 * since 2000, 16 timelines more) is above them.  A whole-database restore
 * loads the extension's tables before the triggers: its rows are below the
 * restored terms and marks, and nothing is recorded (but for a table fenced
 * per row with a lock service's tokens, which no scope covers: a harmless
 * move).
 *
 * Likewise each row a superuser's session, or a subscription a superuser
 * owns, writes unchecked under session_replication_role = replica: a
 * logical replication copy of the application's tables becomes a primary
 * whose first term is above every term its source wrote into them.
 *
 * The read runs no code of any role (a heap scan and the integer's own
 * compare) and needs no right on the table beyond the trigger's; it only
 * ever moves the clock up, never changes a verdict on a write.
 *
 *-------------------------------------------------------------------------
 */
#include "trigger/restored_fence.h"

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "replication/logicalworker.h"
#include "tcop/deparse_utility.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "clock/clock_generation.h"
#include "clock/term_band.h"
#include "state/extension_state.h"
#include "state/citus_shards.h"
#include "trigger/fence_config.h"

/*
 * The token column a fence trigger's arguments name (as fence_config.c
 * reads them: the arguments, or the elements of a single packed one), and
 * its fixed scope if it names one; false when they name no column.  Not
 * checked: a trigger made by hand with bad arguments is refused at its
 * first write, not here.
 */
static bool
fence_arguments(const Trigger *t, char **column, char **scope)
{
	int			nargs = t->tgnargs;
	char	  **args = t->tgargs;

	if (nargs == 1 && args[0][0] == '{' && !fence_config_unpack(args[0], &nargs, &args))
		return false;
	if (nargs < 1)
		return false;
	*column = pstrdup(args[0]);
	*scope = nargs >= 4 && strcmp(args[2], "scope") == 0 ? pstrdup(args[3]) : NULL;
	return true;
}

/*
 * The highest token that the rows of relid and of its partitions carry in
 * "column" (when it is a smallint, integer or bigint there); 0 if none.
 */
static int64
highest_row_token(Oid relid, const char *column)
{
	int64		highest = 0;
	ListCell   *lc;

	foreach(lc, find_all_inheritors(relid, AccessShareLock, NULL))
	{
		Relation	leaf = table_open(lfirst_oid(lc), AccessShareLock);
		AttrNumber	att = get_attnum(RelationGetRelid(leaf), column);
		Oid			type = att == InvalidAttrNumber ? InvalidOid :
			getBaseType(get_atttype(RelationGetRelid(leaf), att));

		/*
		 * not another session's temporary table (an inheritance child): its
		 * rows are in that session's buffers, as ANALYZE skips it
		 */
		if (RELKIND_HAS_STORAGE(leaf->rd_rel->relkind) && !RELATION_IS_OTHER_TEMP(leaf) &&
			(type == INT2OID || type == INT4OID || type == INT8OID))
		{
			Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
			TupleTableSlot *slot = table_slot_create(leaf, NULL);
			TableScanDesc scan = table_beginscan(leaf, snapshot, 0, NULL);

			while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
			{
				bool		isnull;
				Datum		d = slot_getattr(slot, att, &isnull);

				if (!isnull)
					highest = Max(highest, fence_token_value(type, d));
			}
			table_endscan(scan);
			ExecDropSingleTupleTableSlot(slot);
			UnregisterSnapshot(snapshot);
		}
		table_close(leaf, NoLock);
	}
	return highest;
}

/* The fence's row trigger "tgoid" on relid: its rows' highest token, noted. */
static void
note_restored_rows(Oid relid, Oid tgoid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	char	   *column = NULL;
	char	   *scope = NULL;
	int64		highest;
	int64		generation;
	int64		covered;

	for (int i = 0; rel->trigdesc != NULL && i < rel->trigdesc->numtriggers; i++)
	{
		const Trigger *t = &rel->trigdesc->triggers[i];

		/* copies: the relcache's go with the close */
		if (t->tgoid == tgoid && !fence_arguments(t, &column, &scope))
			column = NULL;
	}
	table_close(rel, NoLock);
	if (column == NULL)
		return;
	highest = highest_row_token(relid, column);

	/*
	 * No row with a token (a schema restored alone, an empty queue): the
	 * source's terms are unknown, not absent.  Noted as token 0, which the
	 * clock reads as token 1 only while it has no row (this database has
	 * issued no term) and the scope has no mark: a claim by an unknown
	 * server at 2000-01-01, and the first term moves as after any move.
	 */
	generation = clock_note_unknown_terms(Max(highest, 0), scope, &covered);
	if (generation >= 0 && highest > 0)
		ereport(NOTICE,
				(errmsg("the epoch clock moves above the tokens of table \"%s\"",
						get_rel_name(relid)),
				 errdetail("Its rows carry token " INT64_FORMAT ", above every term of this database and its scope's mark: they were restored without the extension's data (a restore of a schema, or of rows alone). The next term is issued beyond generation " INT64_FORMAT ".",
						   highest, generation)));
	else if (generation >= 0)
		ereport(NOTICE,
				(errmsg("the epoch clock moves above the terms a restored fence's source may have issued"),
				 errdetail("Table \"%s\" has its fence restored with no token in its rows, into a database that has issued no term: the source's terms are unknown. The first term moves above generation " INT64_FORMAT " by 16 timelines and the time since 2000-01-01.",
						   get_rel_name(relid), generation)));
}

/*
 * Whether the command is a superuser's: the current role is one, or the
 * session was authenticated as one and runs no SECURITY DEFINER function
 * (a restore under SET SESSION AUTHORIZATION or SET ROLE: pg_restore
 * --use-set-session-authorization or --role creates each trigger as the
 * table's owner).  Such a session may RESET SESSION AUTHORIZATION or RESET
 * ROLE and do the same as the superuser: whatever code runs in it could.
 * Not a SECURITY DEFINER function of an ordinary role that a superuser's
 * session calls: it runs as its owner, with no way back.
 */
static bool
superuser_command(void)
{
	/*
	 * a logical replication worker: its subscription's owner (from
	 * PostgreSQL 16 it applies as each table's owner, by its own switch)
	 */
	if (IsLogicalWorker())
		return superuser_arg(GetAuthenticatedUserId());
	return superuser() ||
		(superuser_arg(GetAuthenticatedUserId()) && !InLocalUserIdChange());
}

/*
 * Whether an ALTER TABLE command enables the trigger "tgname" (ENABLE
 * [ALWAYS | REPLICA] TRIGGER tgname, ALL or USER): a data-only restore with
 * --disable-triggers ends each table's rows with ENABLE TRIGGER ALL.  Not
 * the enabling of another trigger (the fence's TRUNCATE trigger, a
 * whole-database restore's ENABLE ALWAYS of each, an application's own):
 * the fence judged every row written since it was enabled, and the read is
 * a full scan under the ALTER TABLE's lock, which holds off every write.
 */
static bool
enables_trigger(const CollectedCommand *cmd, const char *tgname)
{
	ListCell   *lc;

	if (cmd == NULL || cmd->type != SCT_AlterTable)
		return false;
	foreach(lc, cmd->d.alterTable.subcmds)
	{
		const CollectedATSubcmd *sub = (const CollectedATSubcmd *) lfirst(lc);
		const AlterTableCmd *at = (const AlterTableCmd *) sub->parsetree;

		if (at == NULL || !IsA(at, AlterTableCmd))
			continue;
		switch (at->subtype)
		{
			case AT_EnableTrig:
			case AT_EnableAlwaysTrig:
			case AT_EnableReplicaTrig:
				if (at->name != NULL && strcmp(at->name, tgname) == 0)
					return true;
				break;
			case AT_EnableTrigAll:
			case AT_EnableTrigUser:
				return true;
			default:
				break;
		}
	}
	return false;
}

void
restored_fences_note(void)
{
	/* a fence's row trigger made by hand (its clones on partitions have a parent) */
	static const char *created_sql =
		"SELECT t.tgrelid, t.oid, NULL, NULL"
		"  FROM pg_catalog.pg_event_trigger_ddl_commands() AS d"
		"  JOIN pg_catalog.pg_trigger AS t ON t.oid OPERATOR(pg_catalog.=) d.objid"
		" WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_trigger'::pg_catalog.regclass"
		"   AND t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure"
		"   AND t.tgparentid OPERATOR(pg_catalog.=) 0"
		/* BEFORE ... FOR EACH ROW, with the fence's arguments */
		"   AND (t.tgtype::pg_catalog.int4 OPERATOR(pg_catalog.&) 3) OPERATOR(pg_catalog.=) 3"
		"   AND t.tgnargs OPERATOR(pg_catalog.>) 0";
	/* each enabled fence row trigger of a table altered (one may hand-make several) */
	static const char *altered_sql =
		"SELECT d.objid, t.oid, d.command, t.tgname"
		"  FROM pg_catalog.pg_event_trigger_ddl_commands() AS d"
		"  JOIN pg_catalog.pg_trigger AS t ON t.tgrelid OPERATOR(pg_catalog.=) d.objid"
		" WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
		"   AND d.command_tag OPERATOR(pg_catalog.=) 'ALTER TABLE'"
		"   AND t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure"
		"   AND (t.tgtype::pg_catalog.int4 OPERATOR(pg_catalog.&) 3) OPERATOR(pg_catalog.=) 3"
		"   AND t.tgnargs OPERATOR(pg_catalog.>) 0"
		"   AND t.tgenabled OPERATOR(pg_catalog.<>) 'D'";
	const char *queries[2] = {created_sql, altered_sql};
	MemoryContext caller = CurrentMemoryContext;
	List	   *relids = NIL;
	List	   *tgoids = NIL;
	ListCell   *lr;
	ListCell   *lt;

	/*
	 * Citus's own connections name themselves so; without Citus the name is
	 * only a name (a database's owner may make it the default of every
	 * session that sends none)
	 */
	if (!superuser_command() || InSecurityRestrictedOperation() || IsBinaryUpgrade ||
		(citus_internal_backend() && citus_installed()))
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	for (size_t q = 0; q < lengthof(queries); q++)
	{
		/* not read-only: the statement's snapshot was taken before the trigger was made */
		if (SPI_execute(queries[q], false, 0) != SPI_OK_SELECT)
			elog(ERROR, "reading the triggers of the event trigger failed");
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;
			bool		created;
			Datum		relid = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
			Datum		tgoid = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
			/* the ALTER TABLE's command (NULL for a trigger created) */
			Datum		command = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &created);
			MemoryContext spi;

			if (!created &&
				!enables_trigger((const CollectedCommand *) DatumGetPointer(command),
								 NameStr(*DatumGetName(SPI_getbinval(SPI_tuptable->vals[i],
																	 SPI_tuptable->tupdesc, 4, &isnull)))))
				continue;
			spi = MemoryContextSwitchTo(caller);
			relids = lappend_oid(relids, DatumGetObjectId(relid));
			tgoids = lappend_oid(tgoids, DatumGetObjectId(tgoid));
			MemoryContextSwitchTo(spi);
		}
	}
	SPI_finish();
	forboth(lr, relids, lt, tgoids)
		note_restored_rows(lfirst_oid(lr), lfirst_oid(lt));
}

/*
 * A row written unchecked under session_replication_role = replica
 * (fence_trigger.c: replica_passes()) by a superuser's session or a
 * subscription a superuser owns: a logical replication copy's initial copy
 * and apply, a superuser's load under that setting.  Its token, when
 * above every term the clock knows (not the scopes' marks: the copy's
 * scopes are not there), is recorded as restored fences are: a logical
 * copy of the application's tables (without fencing's) becomes a primary
 * whose first term is above every term its source wrote into them.  The
 * tokens the clock covers are remembered by the backend (per clock
 * table): a row in that range, every row but the first of a band, costs
 * one compare.  What a claim of this transaction covers is forgotten when
 * it rolls back, to a savepoint too (restored_fence_at_abort()).
 */
static Oid	covered_clock = InvalidOid;
static int64 covered = -1;

void
restored_fence_note_token(int64 token)
{
	Oid			clock = fencing_clock_relid_if_installed();

	/* a token of 0 would be read as a table with no token: not a row's */
	if (token <= 0 || !OidIsValid(clock) || (clock == covered_clock && token <= covered) ||
		term_band_of(token) >= TERM_BAND_COUNT / 2 || !superuser_command())
		return;
	(void) clock_note_unknown_terms(token, NULL, &covered);
	covered_clock = clock;
}

/*
 * A transaction or subtransaction rolled back (or prepared: it may be
 * rolled back later): the range remembered may rest on a claim it
 * inserted, which is gone with it.  The next row above the issued terms
 * asks the clock again.
 */
void
restored_fence_at_abort(void)
{
	covered_clock = InvalidOid;
	covered = -1;
}
