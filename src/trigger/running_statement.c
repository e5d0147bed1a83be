/*-------------------------------------------------------------------------
 *
 * running_statement.c
 *	  An ExecutorRun hook that keeps a stack of the statements being
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
 * the row; statements run by triggers or functions meanwhile push and pop
 * their own entries.  Plans are looked at only when a decision needs it.
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
	struct RunningStatement *outer;
} RunningStatement;

static RunningStatement *innermost = NULL;
static uint64 last_id = 0;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;

static void
fencing_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
					uint64 count, bool execute_once)
{
	RunningStatement frame;

	frame.query = queryDesc;
	frame.id = ++last_id;
	frame.outer = innermost;
	innermost = &frame;
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

void
running_statement_init(void)
{
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = fencing_ExecutorRun;
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

MergeAssigns
running_statement_merge_assigns(const char *column)
{
	MergeAssigns result = MERGE_NONE;
#if PG_VERSION_NUM >= 150000
	int			pos = 0;
	ModifyTable *mt;

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
