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
 *-------------------------------------------------------------------------
 */
#include "trigger/running_statement.h"

#include "executor/executor.h"
#include "nodes/plannodes.h"

typedef struct RunningStatement
{
	QueryDesc  *query;
	uint64		id;
	int8		has_merge;		/* -1 until known: the plan is looked at once */
	struct RunningStatement *outer;
} RunningStatement;

static RunningStatement *innermost = NULL;
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

/*
 * The ModifyTable nodes of the running statement, one per call (*pos starts
 * at 0): the top of the plan, then the top of each subplan (a data-modifying
 * WITH query is a subplan).  NULL when there are no more.
 */
static ModifyTable *
next_modify_table(int *pos)
{
	PlannedStmt *stmt;

	if (innermost == NULL || innermost->query->plannedstmt == NULL)
		return NULL;
	stmt = innermost->query->plannedstmt;
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
/* Whether the running statement has a MERGE; found once per statement. */
static bool
statement_has_merge(void)
{
	int			pos = 0;
	ModifyTable *mt;

	if (innermost == NULL)
		return false;
	if (innermost->has_merge < 0)
	{
		innermost->has_merge = 0;
		while ((mt = next_modify_table(&pos)) != NULL)
		{
			if (mt->operation == CMD_MERGE)
				innermost->has_merge = 1;
		}
	}
	return innermost->has_merge == 1;
}
#endif

MergeAssigns
running_statement_merge_assigns(const char *column)
{
	MergeAssigns result = MERGE_NONE;
#if PG_VERSION_NUM >= 150000
	int			pos = 0;
	ModifyTable *mt;

	/* every row of every UPDATE asks: most statements are no MERGE */
	if (!statement_has_merge())
		return MERGE_NONE;
	while ((mt = next_modify_table(&pos)) != NULL)
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
running_statement_has_on_conflict(void)
{
	int			pos = 0;
	ModifyTable *mt;

	while ((mt = next_modify_table(&pos)) != NULL)
	{
		if (mt->operation == CMD_INSERT && mt->onConflictAction != ONCONFLICT_NONE)
			return true;
	}
	return false;
}
