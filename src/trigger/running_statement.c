/*-------------------------------------------------------------------------
 *
 * running_statement.c
 *	  ExecutorRun and ExecutorFinish hooks that keep a stack of the statements
 *	  being executed, so that the fence trigger knows exactly which statement,
 *	  which of its ModifyTable nodes and, for a MERGE, which action fired it.
 *
 * A row trigger sees one row; five decisions need the statement:
 *
 *   - MERGE hands BEFORE UPDATE triggers the union of the columns of all its
 *     UPDATE actions as tg_updatedcols, so "the token column was assigned"
 *     must be asked of the action that runs;
 *   - a BEFORE INSERT trigger of INSERT ... ON CONFLICT fires before the
 *     conflict check, so the row may never be written;
 *   - the DELETE half of a row moving between partitions must be recognised
 *     as part of the UPDATE that moved it, and nothing else;
 *   - a view written through may give the token column a DEFAULT, which the
 *     rewriter fills in before any trigger: the value is not the writer's;
 *   - a foreign key's cascade runs as the referencing table's owner: the
 *     value it writes comes from the statement that changed the referenced
 *     row, run by the role current then (running_statement_cascade_user()).
 *
 * What guarantees it: the executor gives each ResultRelInfo its own copy of
 * the relation's triggers (InitResultRelInfo), and the trigger manager hands
 * the trigger a pointer into that copy (tg_trigger).  So the statement, and
 * its ModifyTable node, is the one among the running statements (frames)
 * one of whose result relations holds that very Trigger; nothing is matched
 * by relation, name or plan shape.  BEFORE ROW triggers fire inside
 * ExecutorRun of the statement that writes the row, or inside its
 * ExecutorFinish (a data-modifying WITH query the main query does not read).
 *
 * A trigger found in no frame was fired either by a write that runs no plan
 * (COPY FROM, logical replication apply: plain INSERT, UPDATE, DELETE), or
 * by a statement that began before these hooks existed: a session loads the
 * library at its first call of a fencing function, often in the middle of a
 * statement (DO, CALL, EXPLAIN ANALYZE, a function called by a write).  Such
 * statements can only run in the transaction that loaded the library; in it
 * an unknown trigger is FIRED_BY_UNSEEN and the fence judges it without the
 * statement or refuses it (fence_trigger.c), never by a guess.  Only the
 * active portal's own statement, when its plan has a single ModifyTable
 * node, is told apart by the memory context its executor state lives in
 * (portal_statement_operation()).  With the
 * library in shared_preload_libraries (or session_preload_libraries) every
 * statement is seen.
 *
 *-------------------------------------------------------------------------
 */
#include "trigger/running_statement.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/partition.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_rewrite.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#endif
#include "rewrite/rewriteHandler.h"
#include "tcop/pquery.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "marks/scope_mark.h"

typedef struct RunningStatement
{
	QueryDesc  *query;
	uint64		id;
	Oid			user;			/* the current user when it started */
	int			sec_context;	/* and the security context */
	struct RunningStatement *outer;
} RunningStatement;

static RunningStatement *innermost = NULL;

/*
 * Set while the transaction that loaded the library (in the middle of a
 * statement, maybe) runs: statements may be running that no frame saw.
 */
static bool unseen_possible = false;

/* The key of the statements no frame saw (scope_mark_defer()), their id. */
static char unseen_statement;	/* distinct addresses: not const (mergeable) */
static uint64 unseen_id = 0;

/* The key of the writes that run no plan. */
static char unplanned_statement;

/*
 * The triggers that deferred a raise under the unseen key: the unseen
 * statement holding one of them finishes (in a hooked ExecutorFinish), and
 * with it the deferral.  Unseen statements finish innermost first, and only
 * the innermost running one fires triggers, so one statement's at a time.
 */
#define MAX_UNSEEN_DEFERRING 8
static const Trigger *unseen_deferring[MAX_UNSEEN_DEFERRING];
static int	n_unseen_deferring = 0;

static uint64 last_id = 0;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;

/* The last answer, for the rows that follow: valid while its frame runs. */
static FiringStatement last_found;
static const Trigger *last_trigger = NULL;

static void
push_frame(RunningStatement *frame, QueryDesc *queryDesc)
{
	frame->query = queryDesc;
	frame->id = ++last_id;
	GetUserIdAndSecContext(&frame->user, &frame->sec_context);
	frame->outer = innermost;
	innermost = frame;
}

static void
fencing_ExecutorRun(FENCING_EXECUTORRUN_PARAMS)
{
	RunningStatement frame;

	push_frame(&frame, queryDesc);
	PG_TRY();
	{
		if (prev_ExecutorRun)
			prev_ExecutorRun(FENCING_EXECUTORRUN_ARGS);
		else
			standard_ExecutorRun(FENCING_EXECUTORRUN_ARGS);
	}
	PG_FINALLY();
	{
		innermost = frame.outer;
	}
	PG_END_TRY();
}

/* Whether one of rri's own copies of its triggers is trigger. */
static inline bool
holds_trigger(const ResultRelInfo *rri, const Trigger *trigger)
{
	const TriggerDesc *desc = rri->ri_TrigDesc;

	if (desc == NULL)
		return false;
	for (int i = 0; i < desc->numtriggers; i++)
	{
		if (&desc->triggers[i] == trigger)
			return true;
	}
	return false;
}

/* The ResultRelInfo of mt that holds trigger, or NULL. */
static ResultRelInfo *
node_result_rel(ModifyTableState *mt, const Trigger *trigger)
{
	ListCell   *lc;

	for (int i = 0; i < mt->mt_nrels; i++)
	{
		if (holds_trigger(&mt->resultRelInfo[i], trigger))
			return &mt->resultRelInfo[i];
	}
	if (mt->rootResultRelInfo != NULL && holds_trigger(mt->rootResultRelInfo, trigger))
		return mt->rootResultRelInfo;
	/* partitions a row was routed to, made for this node's root */
	foreach(lc, mt->ps.state->es_tuple_routing_result_relations)
	{
		ResultRelInfo *rri = (ResultRelInfo *) lfirst(lc);

		if (rri->ri_RootResultRelInfo == mt->rootResultRelInfo &&
			holds_trigger(rri, trigger))
			return rri;
	}
	return NULL;
}

/*
 * The ModifyTable node of queryDesc that holds trigger, and its
 * ResultRelInfo: the main query's, then those of data-modifying WITH
 * queries.
 */
static ModifyTableState *
statement_node(QueryDesc *queryDesc, const Trigger *trigger, ResultRelInfo **rri)
{
	ListCell   *lc;

	if (queryDesc->planstate == NULL || queryDesc->estate == NULL)
		return NULL;
	if (IsA(queryDesc->planstate, ModifyTableState) &&
		(*rri = node_result_rel((ModifyTableState *) queryDesc->planstate, trigger)) != NULL)
		return (ModifyTableState *) queryDesc->planstate;
	foreach(lc, queryDesc->estate->es_auxmodifytables)
	{
		ModifyTableState *mt = (ModifyTableState *) lfirst(lc);

		if ((*rri = node_result_rel(mt, trigger)) != NULL)
			return mt;
	}
	return NULL;
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
		if (n_unseen_deferring > 0)
		{
			/* the unseen statement that deferred raises, if it is this one */
			for (int i = 0; i < n_unseen_deferring; i++)
			{
				ResultRelInfo *rri;

				if (statement_node(queryDesc, unseen_deferring[i], &rri) != NULL)
				{
					n_unseen_deferring = 0;
					scope_mark_statement_done(&unseen_statement);
					break;
				}
			}
		}
	}
	PG_FINALLY();
	{
		innermost = frame.outer;
	}
	PG_END_TRY();
}

void
running_statement_at_xact_end(void)
{
	/* no statement runs across the end of a transaction */
	unseen_possible = false;
	n_unseen_deferring = 0;
}

void
running_statement_init(void)
{
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = fencing_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = fencing_ExecutorFinish;

	/*
	 * Loaded in a transaction: by a statement (CREATE EXTENSION, LOAD, or
	 * the first call of one of its functions) that may be nested in others.
	 * Preloaded: before any statement.
	 */
	unseen_possible = IsTransactionState();
	unseen_id = ++last_id;
}

/*
 * The operation of the top-level statement of the active portal when it is
 * the statement no frame saw that fired the trigger, else CMD_UNKNOWN.  The
 * executor fills a ResultRelInfo's trigger FmgrInfo at the first call, in
 * its statement's query context (ExecutorRun works in it); that context is
 * made in the portal's own context only for the portal's own statement
 * (statements nested in it run under SPI's or a SQL function's contexts).
 * With one planned statement, no data-modifying WITH query and a
 * ModifyTable at the top, that node is the one that fired.
 */
static CmdType
portal_statement_operation(MemoryContext trigger_cxt, bool *on_conflict)
{
	PlannedStmt *stmt;
	ModifyTable *mt;

	*on_conflict = false;
	if (ActivePortal == NULL || trigger_cxt == NULL ||
		trigger_cxt->parent != ActivePortal->portalContext ||
		list_length(ActivePortal->stmts) != 1)
		return CMD_UNKNOWN;
	stmt = linitial_node(PlannedStmt, ActivePortal->stmts);
	if (stmt->commandType == CMD_UTILITY || stmt->hasModifyingCTE ||
		stmt->planTree == NULL || !IsA(stmt->planTree, ModifyTable))
		return CMD_UNKNOWN;
	mt = (ModifyTable *) stmt->planTree;
	*on_conflict = mt->operation == CMD_INSERT && mt->onConflictAction != ONCONFLICT_NONE;
	return mt->operation;
}

const FiringStatement *
running_statement_firing(const TriggerData *trigdata, MemoryContext trigger_cxt)
{
	const Trigger *trigger = trigdata->tg_trigger;
	RunningStatement *frame;

	if (innermost != NULL && last_trigger == trigger && last_found.id == innermost->id)
		return &last_found;

	/* the innermost running statement fired it, unless no frame saw it */
	for (frame = innermost; frame != NULL; frame = frame->outer)
	{
		ResultRelInfo *rri;
		ModifyTableState *mt = statement_node(frame->query, trigger, &rri);

		if (mt == NULL)
			continue;
		last_found.by = FIRED_BY_PLAN;
		last_found.id = frame->id;
		last_found.key = frame->query;
		last_found.operation = mt->operation;
		last_found.on_conflict = mt->operation == CMD_INSERT &&
			((ModifyTable *) mt->ps.plan)->onConflictAction != ONCONFLICT_NONE;
		last_found.mt = mt;
		last_found.rri = rri;
		last_trigger = frame == innermost ? trigger : NULL;
		return &last_found;
	}

	last_trigger = NULL;
	memset(&last_found, 0, sizeof(last_found));
	last_found.operation = CMD_UNKNOWN;
	if (unseen_possible)
	{
		last_found.by = FIRED_BY_UNSEEN;
		last_found.id = unseen_id;
		last_found.key = &unseen_statement;
	}
	else
	{
		/* its deferred raises keep their locks until the transaction ends */
		last_found.by = FIRED_WITHOUT_PLAN;
		last_found.key = &unplanned_statement;
	}
	last_found.operation = portal_statement_operation(trigger_cxt, &last_found.on_conflict);
	return &last_found;
}

int
running_statement_portal_merge_assigns(const FiringStatement *st, Oid relid, AttrNumber attnum)
{
#if PG_VERSION_NUM >= 150000
	PlannedStmt *stmt;
	ModifyTable *mt;
	ListCell   *lc;
	int			assigning = 0;
	int			updates = 0;

	if (st->by == FIRED_BY_PLAN || st->operation != CMD_MERGE)
		return -1;
	/* the statement portal_statement_operation() found */
	stmt = linitial_node(PlannedStmt, ActivePortal->stmts);
	mt = (ModifyTable *) stmt->planTree;
	if (list_length(mt->resultRelations) != 1 || list_length(mt->mergeActionLists) != 1 ||
		rt_fetch(linitial_int(mt->resultRelations), stmt->rtable)->relid != relid)
		return -1;
	foreach(lc, (List *) linitial(mt->mergeActionLists))
	{
		MergeAction *action = (MergeAction *) lfirst(lc);

		if (action->commandType != CMD_UPDATE)
			continue;
		updates++;
		if (list_member_int(action->updateColnos, attnum))
			assigning++;
	}
	if (assigning == updates)
		return 1;
	if (assigning == 0)
		return 0;
#endif
	return -1;
}

/* A raise deferred under an unseen statement: remember which trigger's. */
const void *
running_statement_defer_key(const FiringStatement *st, const TriggerData *trigdata)
{
	if (st->by != FIRED_BY_UNSEEN)
		return st->key;
	for (int i = 0; i < n_unseen_deferring; i++)
	{
		if (unseen_deferring[i] == trigdata->tg_trigger)
			return st->key;
	}
	if (n_unseen_deferring < MAX_UNSEEN_DEFERRING)
		unseen_deferring[n_unseen_deferring++] = trigdata->tg_trigger;

	/*
	 * More tables than that in one unseen statement: the ones recorded find
	 * it when it finishes, which gives back all its deferrals (one key).
	 */
	return st->key;
}

CmdType
running_statement_merge_action(const FiringStatement *st, List **colnos)
{
#if PG_VERSION_NUM >= 150000
	MergeActionState *running = NULL;

	*colnos = NIL;
	if (st->by != FIRED_BY_PLAN || st->operation != CMD_MERGE)
		return CMD_UNKNOWN;
#if PG_VERSION_NUM >= 170000
	/* the executor records the action it runs */
	running = st->mt->mt_merge_action;
#else
	{
		ListCell   *lc;

		/*
		 * MERGE runs, of the WHEN MATCHED actions of the row's relation, the
		 * first whose condition holds; each condition evaluated leaves its
		 * result in its ExprState.  The conditions before the running action
		 * were evaluated for this row (false), its own too (true); the
		 * actions after it were not reached.  An action without condition
		 * always holds.
		 */
		foreach(lc, st->rri->ri_matchedMergeAction)
		{
			MergeActionState *action = (MergeActionState *) lfirst(lc);
			ExprState  *qual = action->mas_whenqual;

			if (qual == NULL || (!qual->resnull && DatumGetBool(qual->resvalue)))
			{
				running = action;
				break;
			}
		}
	}
#endif
	if (running == NULL)
		return CMD_UNKNOWN;
	if (running->mas_action->commandType == CMD_UPDATE)
		*colnos = running->mas_action->updateColnos;
	return running->mas_action->commandType;
#else
	*colnos = NIL;
	return CMD_UNKNOWN;
#endif
}

/*
 * Follow column attnum of view viewid down its auto-updatable chain (each
 * level a plain column of its one base relation) to a table: whether that
 * is column "column" of one of targets.  Depth-bounded like the rewriter.
 */
static bool
view_column_reaches(Oid viewid, AttrNumber attnum, List *targets, const char *column)
{
	for (int depth = 0; depth < 100; depth++)
	{
		Relation	view = relation_open(viewid, AccessShareLock);
		Query	   *query = get_view_query(view);
		TargetEntry *tle = get_tle_by_resno(query->targetList, attnum);
		Var		   *var;
		RangeTblEntry *rte;

		if (tle == NULL || !IsA(tle->expr, Var) ||
			((Var *) tle->expr)->varlevelsup != 0)
		{
			relation_close(view, AccessShareLock);
			return false;
		}
		var = (Var *) tle->expr;
		rte = rt_fetch(var->varno, query->rtable);
		relation_close(view, AccessShareLock);
		if (rte->rtekind != RTE_RELATION || var->varattno <= 0)
			return false;
		if (rte->relkind != RELKIND_VIEW)
		{
			char	   *name = get_attname(rte->relid, var->varattno, true);

			return name != NULL && strcmp(name, column) == 0 &&
				list_member_oid(targets, rte->relid);
		}
		viewid = rte->relid;
		attnum = var->varattno;
	}
	return false;
}

/*
 * Whether rte is a view the statement writes through: one it needs INSERT
 * or UPDATE on, whatever the statement kind (INSERT, UPDATE, or a MERGE
 * with an INSERT or UPDATE action: the rewriter keeps the view's entry and
 * its permissions when it turns the write into one on the base relation).
 */
static bool
written_view(List *perminfos, const RangeTblEntry *rte)
{
	AclMode		perms;

	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_VIEW)
		return false;
#if PG_VERSION_NUM >= 160000
	if (rte->perminfoindex == 0)
		return false;
	perms = getRTEPermissionInfo(perminfos, (RangeTblEntry *) rte)->requiredPerms;
#else
	perms = rte->requiredPerms;
#endif
	return (perms & (ACL_INSERT | ACL_UPDATE)) != 0;
}

static Oid
find_view_default(List *rtable, List *perminfos, Relation rel, const char *column)
{
	List	   *targets = NIL;
	ListCell   *lc;

	foreach(lc, rtable)
	{
		RangeTblEntry *rte = (RangeTblEntry *) lfirst(lc);
		Relation	view;
		TupleConstr *constr;
		Oid			found = InvalidOid;

		if (!written_view(perminfos, rte))
			continue;
		view = relation_open(rte->relid, AccessShareLock);
		constr = RelationGetDescr(view)->constr;
		if (constr != NULL && constr->num_defval > 0)
		{
			/* the relation written and, for a partition, its ancestors */
			if (targets == NIL)
				targets = lcons_oid(RelationGetRelid(rel),
									rel->rd_rel->relispartition ?
									get_partition_ancestors(RelationGetRelid(rel)) : NIL);
			for (int i = 0; i < constr->num_defval && !OidIsValid(found); i++)
			{
				if (view_column_reaches(rte->relid, constr->defval[i].adnum, targets, column))
					found = rte->relid;
			}
		}
		relation_close(view, AccessShareLock);
		if (OidIsValid(found))
			return found;
	}
	return InvalidOid;
}

/*
 * For a statement nobody saw (its range table unknown): whether a view that
 * may reach the column "column" of one of targets, directly or over other views,
 * has a DEFAULT on any of its columns.  Read from the catalogs alone (no
 * view is opened, so none is locked): the views whose rules depend on that
 * column, then on any column of those views, and so on; a view with any
 * DEFAULT answers.  An upper bound of find_view_default()'s answer.
 */
static Oid
rule_view(Relation rewrite, Oid ruleoid)
{
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			view = InvalidOid;

	ScanKeyInit(&key, Anum_pg_rewrite_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ruleoid));
	scan = systable_beginscan(rewrite, RewriteOidIndexId, true, NULL, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
		view = ((Form_pg_rewrite) GETSTRUCT(tup))->ev_class;
	systable_endscan(scan);
	return view;
}

static bool
has_default(Relation attrdef, Oid relid)
{
	ScanKeyData key;
	SysScanDesc scan;
	bool		found;

	ScanKeyInit(&key, Anum_pg_attrdef_adrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(attrdef, AttrDefaultIndexId, true, NULL, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	return found;
}

#define MAX_VIEWS_FOLLOWED 1000

static Oid
any_view_default(List *targets, const char *column)
{
	Relation	depend = table_open(DependRelationId, AccessShareLock);
	Relation	rewrite = table_open(RewriteRelationId, AccessShareLock);
	Relation	attrdef = table_open(AttrDefaultRelationId, AccessShareLock);
	List	   *queue = list_copy(targets);
	Oid			found = InvalidOid;

	for (int i = 0; i < list_length(queue) && !OidIsValid(found); i++)
	{
		Oid			relid = list_nth_oid(queue, i);
		ScanKeyData key[3];
		SysScanDesc scan;
		HeapTuple	tup;

		/* the tables by the token column (and its ancestors'), views whole */
		ScanKeyInit(&key[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(RelationRelationId));
		ScanKeyInit(&key[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(relid));
		ScanKeyInit(&key[2], Anum_pg_depend_refobjsubid, BTEqualStrategyNumber, F_INT4EQ,
					Int32GetDatum(list_member_oid(targets, relid) ? get_attnum(relid, column) : 0));
		scan = systable_beginscan(depend, DependReferenceIndexId, true, NULL,
								  list_member_oid(targets, relid) ? 3 : 2, key);
		while (!OidIsValid(found) && HeapTupleIsValid(tup = systable_getnext(scan)))
		{
			Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tup);
			Oid			view;

			if (dep->classid != RewriteRelationId)
				continue;
			view = rule_view(rewrite, dep->objid);
			if (!OidIsValid(view) || get_rel_relkind(view) != RELKIND_VIEW ||
				list_member_oid(queue, view))
				continue;
			if (has_default(attrdef, view))
				found = view;
			else if (list_length(queue) < MAX_VIEWS_FOLLOWED)
				queue = lappend_oid(queue, view);
			else
				found = view;	/* too many to follow: assume the worst */
		}
		systable_endscan(scan);
	}
	table_close(attrdef, AccessShareLock);
	table_close(rewrite, AccessShareLock);
	table_close(depend, AccessShareLock);
	list_free(queue);
	return found;
}

/*
 * One rule for every statement kind and every action: the statement's range
 * table is read, not its operation.  The rewriter fills a view's DEFAULT
 * into the target list of an INSERT, an UPDATE, an INSERT ... ON CONFLICT
 * DO UPDATE, and of each INSERT and UPDATE action of a MERGE (17 writes
 * views), before any trigger; whichever of them fired, a view written
 * through whose DEFAULT reaches the column answers.  The statement is the
 * frame's, or, for one no frame saw, the active portal's own statement when
 * portal_statement_operation() recognised it (its planned statement is
 * what its executor runs); else nothing is known and InvalidOid answers.
 */
Oid
running_statement_view_default(const FiringStatement *st, Relation rel, const char *column,
							   bool *certain)
{
	static uint64 answered_id = 0;
	static Oid	answered_relid = InvalidOid;
	static Oid	answer = InvalidOid;
	PlannedStmt *stmt;

	*certain = true;
	if (st->by == FIRED_BY_UNSEEN && st->operation == CMD_UNKNOWN)
	{
		/*
		 * Not known at all: any view over the column with a DEFAULT may be
		 * the one; remembered for the unseen statements (one id, one
		 * transaction) relation by relation.
		 */
		*certain = false;
		if (answered_id == st->id && answered_relid == RelationGetRelid(rel))
			return answer;
		answer = any_view_default(lcons_oid(RelationGetRelid(rel),
											rel->rd_rel->relispartition ?
											get_partition_ancestors(RelationGetRelid(rel)) : NIL),
								  column);
		answered_id = st->id;
		answered_relid = RelationGetRelid(rel);
		return answer;
	}
	if (st->by == FIRED_BY_PLAN)
	{
		EState	   *estate = st->mt->ps.state;

		if (answered_id == st->id && answered_relid == RelationGetRelid(rel))
			return answer;
#if PG_VERSION_NUM >= 160000
		answer = find_view_default(estate->es_range_table, estate->es_rteperminfos,
								   rel, column);
#else
		answer = find_view_default(estate->es_range_table, NIL, rel, column);
#endif
		answered_id = st->id;
		answered_relid = RelationGetRelid(rel);
		return answer;
	}
	if (st->operation == CMD_UNKNOWN)
		return InvalidOid;
	/* the statement portal_statement_operation() found: not remembered */
	stmt = linitial_node(PlannedStmt, ActivePortal->stmts);
#if PG_VERSION_NUM >= 160000
	return find_view_default(stmt->rtable, stmt->permInfos, rel, column);
#else
	return find_view_default(stmt->rtable, NIL, rel, column);
#endif
}

Oid
running_statement_cascade_user(bool *unseen)
{
	*unseen = false;
	for (RunningStatement *frame = innermost; frame != NULL; frame = frame->outer)
	{
		if (!(frame->sec_context & SECURITY_NOFORCE_RLS))
			return frame->user;
	}
	*unseen = unseen_possible;
	return InvalidOid;
}
