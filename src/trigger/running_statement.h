/*-------------------------------------------------------------------------
 *
 * running_statement.h
 *	  Which statement fired the fence trigger, and what it is doing, as far
 *	  as a row trigger cannot tell by itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef RUNNING_STATEMENT_H
#define RUNNING_STATEMENT_H

#include "fencing.h"

#include "commands/trigger.h"
#include "nodes/execnodes.h"

extern void running_statement_init(void);
/* Called by end_of_xact.c, in its order. */
extern void running_statement_at_xact_end(void);

/* How the statement that fired a row trigger was found. */
typedef enum FiredBy
{
	FIRED_BY_PLAN,				/* a ModifyTable node of a statement the hooks saw */
	FIRED_BY_UNSEEN,			/* a statement that began before the library was
								 * loaded: what it does is not known */
	FIRED_WITHOUT_PLAN			/* a write that runs no plan (COPY FROM, logical
								 * replication apply): a plain INSERT, UPDATE or
								 * DELETE */
} FiredBy;

typedef struct FiringStatement
{
	FiredBy		by;
	uint64		id;				/* this run of the statement; 0 without a plan */
	const void *key;			/* the statement, for scope_mark_defer() */
	CmdType		operation;		/* FIRED_BY_PLAN: its ModifyTable's operation */
	bool		on_conflict;	/* FIRED_BY_PLAN: INSERT ... ON CONFLICT */

	/*
	 * Not FIRED_BY_PLAN: the operation of the statement when it is known to
	 * be the top-level statement of the active portal, with one ModifyTable
	 * node; else CMD_UNKNOWN.
	 */
	ModifyTableState *mt;		/* FIRED_BY_PLAN: the node */
	ResultRelInfo *rri;			/* FIRED_BY_PLAN: the relation it fired for */
} FiringStatement;

/*
 * The statement whose write fired trigdata (a row trigger); trigger_cxt is
 * the memory context of the trigger's FmgrInfo (fcinfo->flinfo->fn_mcxt).
 */
extern const FiringStatement *running_statement_firing(const TriggerData *trigdata,
													   MemoryContext trigger_cxt);

/*
 * For a row trigger fired by a MERGE (FIRED_BY_PLAN, CMD_MERGE): the command
 * of the action running (CMD_UPDATE, CMD_DELETE, CMD_INSERT), and for an
 * UPDATE action the attribute numbers it assigns, in the numbering of the
 * relation the trigger fired for.  CMD_UNKNOWN when it cannot be told.
 */
extern CmdType running_statement_merge_action(const FiringStatement *st, List **colnos);

/*
 * For a row trigger on relid fired by the active portal's top-level MERGE
 * that no frame holds (not FIRED_BY_PLAN, CMD_MERGE), when the MERGE writes relid alone: 1 when
 * every UPDATE action assigns attnum, 0 when none does (whichever runs, the
 * answer is that), -1 otherwise.
 */
extern int	running_statement_portal_merge_assigns(const FiringStatement *st, Oid relid,
												   AttrNumber attnum);

/*
 * The key under which the row trigger trigdata, fired by st, defers a raise
 * (scope_mark_defer()): given back when that statement ends.
 */
extern const void *running_statement_defer_key(const FiringStatement *st,
											   const TriggerData *trigdata);

/*
 * For a row trigger on rel, whatever the statement kind and the action (an
 * INSERT, an UPDATE, ON CONFLICT DO UPDATE, any MERGE action): a view the
 * statement writes through (auto-updatable, nested or not) that gives a
 * DEFAULT to the view column that is rel's column "column" (or its
 * partitioned ancestor's); InvalidOid if none.  The rewriter fills such a
 * default in before any trigger runs, also for an explicit DEFAULT, so the
 * value cannot be told from one the statement wrote.  *certain is false
 * for a statement that began before the library was loaded and is not the
 * active portal's own (FIRED_BY_UNSEEN, CMD_UNKNOWN): then the answer is a
 * view over the column (directly or over other views) with any DEFAULT,
 * which the statement may or may not write through.  A write that runs no
 * plan (COPY, logical replication apply) writes through no view.
 * Answered once per statement run and relation.
 */
extern Oid	running_statement_view_default(const FiringStatement *st, Relation rel,
										   const char *column, bool *certain);

/*
 * Inside a foreign key's cascade (its queries run as the referencing
 * table's owner, marked SECURITY_NOFORCE_RLS): the role that was the
 * current user when the statement outside the cascade (the one that changed
 * the referenced row, whose AFTER trigger runs the cascade) started, a
 * SECURITY DEFINER function's owner if it ran one.  InvalidOid when no
 * frame saw that statement; *unseen then tells whether it may be one that
 * began before the library was loaded (and not, say, a logical replication
 * apply worker's write, which runs no plan).
 */
extern Oid	running_statement_cascade_user(bool *unseen);

#endif							/* RUNNING_STATEMENT_H */
