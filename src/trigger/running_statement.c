/*-------------------------------------------------------------------------
 *
 * running_statement.c
 *	  ExecutorRun and ExecutorFinish hooks that keep a stack of the statements being
 *	  executed, so the fence trigger can look at the one that fired it.
 *
 * A row trigger sees one row; three decisions need the statement:
 *
 *   - MERGE hands BEFORE UPDATE triggers the union of the columns of all its
 *     UPDATE actions as tg_updatedcols, so "the token column was assigned"
 *     can be false for the action that ran;
 *   - a BEFORE INSERT trigger of INSERT ... ON CONFLICT fires before the
 *     conflict check, so the row may never be written;
 *   - the DELETE half of a row moving between partitions must be recognised
 *     as part of the UPDATE that moved it, and nothing else.
 *
 * BEFORE ROW triggers fire inside ExecutorRun of the statement that writes
 * the row, or inside its ExecutorFinish (a data-modifying WITH query the
 * main query does not read); statements run by triggers or functions
 * meanwhile push and pop their own entries.  Plans are looked at only when a decision needs it.
 *
 * A session loads the library at its first call of a fencing function,
 * which may be the fence trigger itself, in the middle of a statement whose
 * ExecutorRun began before these hooks existed.  That statement has no
 * frame: its plan is the active portal's when that portal's one planned
 * statement writes the trigger's table; when it is not known (a statement
 * nested in it), each decision takes its safe side (below).
 *
 *-------------------------------------------------------------------------
 */
#include "trigger/running_statement.h"

#include "catalog/partition.h"
#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "tcop/pquery.h"

#include "marks/scope_mark.h"

typedef struct RunningStatement
{
	QueryDesc  *query;
	uint64		id;
	int8		has_merge;		/* -1 until known: the plan is looked at once */
	struct RunningStatement *outer;
} RunningStatement;

static RunningStatement *innermost = NULL;

/* The key of the statement that was running when the library was loaded. */
static const char loading_statement = 0;
static uint64 last_id = 0;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;

/*
 * A frame for queryDesc, around ExecutorRun and around ExecutorFinish: a
 * data-modifying WITH query that the main query does not read runs to
 * completion in ExecutorFinish.
 */
static void
push_frame(RunningStatement *frame, QueryDesc *queryDesc)
{
	frame->query = queryDesc;
	frame->id = ++last_id;
	frame->has_merge = -1;
	frame->outer = innermost;
	innermost = frame;
}

static void
fencing_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
					uint64 count, bool execute_once)
{
	RunningStatement frame;

	push_frame(&frame, queryDesc);
	PG_TRY();
	{
		if (prev_ExecutorRun)
			prev_ExecutorRun(queryDesc, direction, count, execute_once);
		else
			standard_ExecutorRun(queryDesc, direction, count, execute_once);
	}
	PG_FINALLY();
	{
		innermost = frame.outer;
	}
	PG_END_TRY();
}

/*
 * Whether queryDesc may be the statement that was running when the library
 * was loaded: the active portal's own statement, at the top.  A statement
 * nested in it has a plan of its own (and one run since has a frame).
 */
static bool
is_loading_statement(QueryDesc *queryDesc)
{
	return ActivePortal != NULL && list_length(ActivePortal->stmts) == 1 &&
		queryDesc->plannedstmt == linitial(ActivePortal->stmts);
}

static void
fencing_ExecutorFinish(QueryDesc *queryDesc)
{
	RunningStatement frame;

	push_frame(&frame, queryDesc);
	PG_TRY();
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
		/* its AFTER triggers fired: locks of raises no row confirmed go */
		scope_mark_statement_done(queryDesc);
		if (frame.outer == NULL && is_loading_statement(queryDesc))
			scope_mark_statement_done(&loading_statement);
	}
	PG_FINALLY();
	{
		innermost = frame.outer;
	}
	PG_END_TRY();
}

void
running_statement_init(void)
{
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = fencing_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = fencing_ExecutorFinish;
}

uint64
running_statement_id(void)
{
	return innermost != NULL ? innermost->id : 0;
}

const void *
running_statement_query(void)
{
	return innermost != NULL ? (const void *) innermost->query : (const void *) &loading_statement;
}

/*
 * The ModifyTable nodes of a plan, one per call (*pos starts at 0): the top
 * of the plan, then the top of each subplan (a data-modifying WITH query is
 * a subplan).  NULL when there are no more.
 */
static ModifyTable *
next_modify_table(PlannedStmt *stmt, int *pos)
{
	if (stmt == NULL)
		return NULL;
	while (*pos <= list_length(stmt->subplans))
	{
		Plan	   *plan = *pos == 0 ? stmt->planTree :
			(Plan *) list_nth(stmt->subplans, *pos - 1);

		(*pos)++;
		if (plan != NULL && IsA(plan, ModifyTable))
			return (ModifyTable *) plan;
	}
	return NULL;
}

/* Whether a ModifyTable node of stmt writes relid, or a table it is a partition of. */
static bool
plan_writes(PlannedStmt *stmt, Oid relid)
{
	List	   *tables = lcons_oid(relid, get_partition_ancestors(relid));
	int			pos = 0;
	ModifyTable *mt;

	while ((mt = next_modify_table(stmt, &pos)) != NULL)
	{
		ListCell   *rc;

		foreach(rc, mt->resultRelations)
		{
			if (list_member_oid(tables, rt_fetch(lfirst_int(rc), stmt->rtable)->relid))
				return true;
		}
	}
	return false;
}

/*
 * Whether the loading statement's plan writes relid: asked for each row it
 * writes, answered once per table (the partition ancestors are a catalog
 * scan).  Only that one statement runs without a frame and with a plan, so
 * the answer is never asked for another.
 */
static bool
loading_plan_writes(PlannedStmt *stmt, Oid relid)
{
	static PlannedStmt *asked_stmt = NULL;
	static Oid	asked_relid = InvalidOid;
	static bool answer;

	if (stmt != asked_stmt || relid != asked_relid)
	{
		answer = plan_writes(stmt, relid);
		asked_stmt = stmt;
		asked_relid = relid;
	}
	return answer;
}

/*
 * The plan of the statement that fired the trigger on relid.  *known is
 * false when it cannot be told (see the head of this file).  A write that
 * runs no plan (COPY; outside any portal) is known, with no plan.
 */
static PlannedStmt *
running_plan(Oid relid, bool *known)
{
	PlannedStmt *stmt;

	*known = true;
	if (innermost != NULL)
		return innermost->query->plannedstmt;
	if (ActivePortal == NULL)
		return NULL;
	*known = list_length(ActivePortal->stmts) == 1;
	if (!*known)
		return NULL;
	stmt = linitial_node(PlannedStmt, ActivePortal->stmts);
	if (stmt->commandType == CMD_UTILITY)
		return NULL;
	if (loading_plan_writes(stmt, relid))
		return stmt;
	*known = false;
	return NULL;
}

#if PG_VERSION_NUM >= 150000
/* Whether an UPDATE action's target list assigns the named column. */
static bool
action_assigns(const MergeAction *action, const char *column)
{
	ListCell   *lc;

	foreach(lc, action->targetList)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		if (!tle->resjunk && tle->resname != NULL && strcmp(tle->resname, column) == 0)
			return true;
	}
	return false;
}
#endif

#if PG_VERSION_NUM >= 150000
/* Whether a plan has a MERGE; for a frame's plan, found once per statement. */
static bool
plan_has_merge(PlannedStmt *stmt)
{
	int			pos = 0;
	ModifyTable *mt;

	if (innermost != NULL && stmt == innermost->query->plannedstmt && innermost->has_merge >= 0)
		return innermost->has_merge == 1;
	while ((mt = next_modify_table(stmt, &pos)) != NULL && mt->operation != CMD_MERGE)
		;
	if (innermost != NULL && stmt == innermost->query->plannedstmt)
		innermost->has_merge = mt != NULL;
	return mt != NULL;
}
#endif

MergeAssigns
running_statement_merge_assigns(Oid relid, const char *column)
{
	MergeAssigns result = MERGE_NONE;
#if PG_VERSION_NUM >= 150000
	bool		known;
	PlannedStmt *stmt = running_plan(relid, &known);
	int			pos = 0;
	ModifyTable *mt;

	/* not known: as if some action did not assign it (the row's token counts only if changed) */
	if (!known)
		return MERGE_ASSIGNS_SOME;
	/* every row of every UPDATE asks: most statements are no MERGE */
	if (!plan_has_merge(stmt))
		return MERGE_NONE;
	while ((mt = next_modify_table(stmt, &pos)) != NULL)
	{
		ListCell   *alc;
		int			assigning = 0;
		int			updates = 0;

		if (mt->operation != CMD_MERGE || mt->mergeActionLists == NIL)
			continue;
		/* one list per result relation, all translations of the same actions */
		foreach(alc, (List *) linitial(mt->mergeActionLists))
		{
			MergeAction *action = (MergeAction *) lfirst(alc);

			if (action->commandType != CMD_UPDATE)
				continue;
			updates++;
			if (action_assigns(action, column))
				assigning++;
		}
		if (assigning > 0 && assigning < updates)
			return MERGE_ASSIGNS_SOME;
		if (assigning > 0)
			result = MERGE_ASSIGNS_ALL;
	}
#endif
	return result;
}

bool
running_statement_has_on_conflict(Oid relid)
{
	bool		known;
	PlannedStmt *stmt = running_plan(relid, &known);
	int			pos = 0;
	ModifyTable *mt;

	/* not known: as if it had (the raise then waits for the row to be written) */
	if (!known)
		return true;
	while ((mt = next_modify_table(stmt, &pos)) != NULL)
	{
		if (mt->operation == CMD_INSERT && mt->onConflictAction != ONCONFLICT_NONE)
			return true;
	}
	return false;
}
