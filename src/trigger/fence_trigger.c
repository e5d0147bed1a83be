/*-------------------------------------------------------------------------
 *
 * fence_trigger.c
 *	  fencing.fence_trigger(): rejects writes whose token is below a mark.
 *
 * Installed by fencing.protect() as a BEFORE ROW trigger for INSERT, UPDATE
 * and DELETE, a BEFORE STATEMENT trigger for TRUNCATE and, on tables with a
 * scope, an AFTER ROW INSERT trigger that raises marks deferred by INSERT ...
 * ON CONFLICT.  For each row:
 *
 *   1. the incoming token (incoming_token): the token the transaction
 *      declared with fencing.use_token(), else the token column if the
 *      statement assigned it; a column value that disagrees with the
 *      declared token is rejected; with tokens => 'declared' the column is
 *      never read; no token at all is an error, and so is a column filled
 *      by a view's DEFAULT; the role that offered the token (declared it,
 *      or writes the column) must be allowed to raise what it raises;
 *   2. with a scope, it is checked against the scope's mark.  An UPDATE
 *      that moves the row to another scope writes to both: each admits it
 *      with the token the write carries for that scope (leaving_token),
 *      never with the other scope's;
 *   3. UPDATE and DELETE compare the token of the row's scope (the one it
 *      leaves) with the row's stored token (the per-row mark; OLD is the
 *      latest, locked version of the row);
 *   4. only when every check passed are marks raised, and an accepted INSERT
 *      or UPDATE stores the token in the row.
 *
 * A stale write fails (policy "error") or is left out (policy "skip").
 * The triggers fire ALWAYS: under session_replication_role = replica only a
 * superuser session or a logical replication apply worker (as a superuser
 * or the table's owner) writes unchecked (replica_passes()); anyone else
 * granted SET on the role is refused.  An INSERT ... ON CONFLICT whose
 * raise must wait for the AFTER INSERT trigger is refused when that
 * trigger would not fire.
 * TRUNCATE reads the rows it throws away straight from the heap, as the
 * caller: no query, so no code of the table's owner runs with other rights.
 *
 * On Citus the triggers fire on the shards (jobs_102041), where the rows
 * are, and name the distributed table (jobs) in what they report.  A
 * table fenced per row needs nothing else.  A write by scope on a worker's
 * shard is judged by the worker's copy of the coordinator's marks, and
 * refused until the coordinator has distributed them
 * (refuse_scope_on_citus_worker()).  The new shard table of a shard move,
 * copy or split carries interim copies of the fence from its creation
 * (trigger/protect.c), which let in Citus's own copy of the rows only
 * (citus_fills_new_placement()).
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "replication/logicalworker.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/input_checks.h"
#include "base/scope_tables.h"
#include "marks/scope_mark.h"
#include "security/scope_acl.h"
#include "security/bypass.h"
#include "state/citus_shards.h"
#include "state/cluster_marks.h"
#include "telemetry/rejection.h"
#include "tokens/declared_token.h"
#include "trigger/fence_config.h"
#include "trigger/restored_fence.h"
#include "trigger/running_statement.h"

/*
 * A row moving between partitions fires BEFORE UPDATE on the source, then
 * BEFORE DELETE there (with no NEW row, on the same ResultRelInfo, so the
 * same copy of the trigger) and BEFORE INSERT on the target.  The token
 * admitted for the UPDATE is remembered with the row's tuple and that copy
 * of the trigger, so that the DELETE of that same tuple by that same run of
 * that statement, when the statement is an UPDATE (or a MERGE running an
 * UPDATE action), and nothing else, carries it.
 */
static struct
{
	uint64		statement;		/* FiringStatement.id, 0 when unused */
	const Trigger *trigger;
	ItemPointerData tid;
	int64		token;
	Oid			offerer;		/* the role that offered it */
} moving_row;

/*
 * The table a write is shown under: a Citus shard's distributed table
 * ("jobs", not "jobs_102041"), else the relation itself.
 */
static const char *
shown_relname(Relation rel, const FenceConfig *cfg)
{
	char	   *name = OidIsValid(cfg->citus_table) ? get_rel_name(cfg->citus_table) : NULL;

	return name != NULL ? name : RelationGetRelationName(rel);
}

/* "Relation "public.t", scope "s"" or "Relation "public.t" (per-row fencing)" */
static char *
where_written(Relation rel, const FenceConfig *cfg, const char *scope)
{
	char	   *relname = psprintf("%s.%s",
									   get_namespace_name(RelationGetNamespace(rel)),
									   shown_relname(rel, cfg));

	if (cfg->scope_kind == FENCE_SCOPE_NONE)
		return psprintf("Relation \"%s\" (per-row fencing)", relname);
	if (scope == NULL)
		return psprintf("Relation \"%s\" (scope column \"%s\")", relname, cfg->scope_column);
	return psprintf("Relation \"%s\", scope \"%s\"", relname, scope);
}

/* The rejections of this trigger, raised by telemetry/rejection.c. */
static bool
reject_stale(Relation rel, const FenceConfig *cfg, const char *scope,
			 int64 token, int64 mark, bool row_mark)
{
	FenceWrite	w = {rel, scope, where_written(rel, cfg, scope)};

	if (row_mark)
		return fence_reject_stale_row(&w, cfg->token_attnum, token, mark,
									  cfg->on_stale == FENCE_ON_STALE_SKIP);
	return fence_reject_stale(&w, token, mark, false,
							  cfg->on_stale == FENCE_ON_STALE_SKIP);
}

static void
reject_missing(Relation rel, const FenceConfig *cfg, const char *scope)
{
	FenceWrite	w = {rel, scope, where_written(rel, cfg, scope)};

	fence_reject_missing(&w, cfg->tokens == FENCE_TOKENS_DECLARED ? NULL : cfg->token_column);
}

static void
reject_conflict(Relation rel, const FenceConfig *cfg, const char *scope,
				int64 column, int64 declared)
{
	FenceWrite	w = {rel, scope, where_written(rel, cfg, scope)};

	fence_reject_conflict(&w, cfg->token_column, column, declared);
}

/*
 * The statement that fired the trigger is not known (it began before the
 * library was loaded, so no hook saw it; or no running statement holds the
 * trigger), and what it does decides the write: refuse rather than guess.
 * Retrying works when the library was loaded meanwhile.
 */
static void
reject_unseen(Relation rel, const FenceConfig *cfg, const char *scope,
			  const FiringStatement *st, const char *unknown)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the fence could not see the statement writing to relation \"%s\"",
					RelationGetRelationName(rel)),
			 st->by == FIRED_BY_UNSEEN ?
			 errdetail("%s: the fencing library was loaded while this statement was running, so the fence cannot tell %s.",
					   where_written(rel, cfg, scope), unknown) :
			 errdetail("%s: no statement the fence saw start holds the trigger that fired (a write that runs no plan, or an executor hook that does not call the previous one), so the fence cannot tell %s.",
					   where_written(rel, cfg, scope), unknown),
			 st->by == FIRED_BY_UNSEEN ?
			 errhint("Add fencing to shared_preload_libraries (or session_preload_libraries), "
					 "or retry the statement: the library is loaded now.") :
			 errhint("Declare the token with fencing.use_token()."),
			 errtable(rel)));
}

/*
 * Under session_replication_role = replica the fence triggers fire (they
 * are ENABLE ALWAYS), and a write passes unchecked only when the rows were
 * judged where they were first written, or by whoever could switch the
 * fence off anyway: a logical replication apply worker applying as a
 * superuser or as the table's owner (PostgreSQL 16 lets roles that are
 * neither own subscriptions), or a superuser's session (a restore, a
 * replication tool), where core's own triggers do not fire either.  In a
 * session the current and the session role must both be superusers: a role
 * granted SET on the parameter (PostgreSQL 15+) may not switch off the
 * fence of a superuser's SECURITY DEFINER function.  Anyone else is
 * refused.  Outside replica role: false, the write is judged.
 */
static bool
replica_passes(Relation rel)
{
	bool		trusted;

	if (likely(SessionReplicationRole != SESSION_REPLICATION_ROLE_REPLICA))
		return false;
	if (IsLogicalWorker())
		trusted = superuser() || has_privs_of_role(GetUserId(), rel->rd_rel->relowner);
	else
		trusted = superuser() && superuser_arg(GetSessionUserId());
	if (trusted)
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to write to protected relation \"%s\" under session_replication_role = replica",
					RelationGetRelationName(rel)),
			 errdetail("Relation \"%s.%s\" is fenced: under session_replication_role = replica only a superuser, or a logical replication apply worker applying as a superuser or the table's owner, writes to it unchecked; role \"%s\" is neither.",
					   get_namespace_name(RelationGetNamespace(rel)),
					   RelationGetRelationName(rel),
					   GetUserNameFromId(GetUserId(), false)),
			 errhint("Set session_replication_role = origin and write with a fencing token."),
			 errtable(rel)));
	return false;				/* keep compiler quiet */
}

/*
 * A column of a row handed to the trigger.  The row is of the trigger's
 * relation and the column number comes from that relation's descriptor
 * (fence_config.c found it there), so the checks heap_getattr() makes of
 * an arbitrary tuple are not needed: this is the per-row hot path.
 */
static inline Datum
row_attr(HeapTuple tuple, AttrNumber attnum, TupleDesc desc, bool *isnull)
{
	Assert(attnum > 0 && attnum <= desc->natts);
	if (attnum > (int) HeapTupleHeaderGetNatts(tuple->t_data))
		return getmissingattr(desc, attnum, isnull);	/* added after the row */
	return fastgetattr(tuple, attnum, desc, isnull);
}

/* The token stored in a row, if any. */
static bool
row_token(HeapTuple tuple, TupleDesc desc, const FenceConfig *cfg, int64 *token)
{
	bool		isnull;
	Datum		d = row_attr(tuple, cfg->token_attnum, desc, &isnull);

	if (isnull)
		return false;
	*token = fence_token_value(cfg->token_type, d);
	return true;
}

/* Room for the text of an integer scope: scope_text() writes it there. */
typedef struct ScopeDigits
{
	char		text[MAXINT8LEN + 1];
} ScopeDigits;

/*
 * The scope named by a scope column's value: its text form, without the
 * padding of char(n), as a cast to text gives it (and as fence_next_epoch()
 * is called with it).  A number's text is written into *digits (no
 * allocation on the write path); any other is palloc'd.
 */
static char *
scope_text(const FenceConfig *cfg, Datum value, ScopeDigits *digits)
{
	char	   *scope;

	/* a number's text, as its output function writes it, without the call */
	if (cfg->scope_int_type != InvalidOid)
	{
		int64		n = cfg->scope_int_type == INT8OID ? DatumGetInt64(value) :
			cfg->scope_int_type == INT4OID ? DatumGetInt32(value) : DatumGetInt16(value);

		pg_lltoa(n, digits->text);
		return digits->text;
	}
	scope = OutputFunctionCall((FmgrInfo *) &cfg->scope_output, value);

	if (cfg->scope_is_bpchar)
	{
		size_t		len = strlen(scope);

		while (len > 0 && scope[len - 1] == ' ')
			scope[--len] = '\0';
	}
	return scope;
}

/* The scope a row belongs to (an integer's text in *digits); NULL for tables fenced per row only. */
static const char *
row_scope(Relation rel, HeapTuple tuple, const FenceConfig *cfg, ScopeDigits *digits)
{
	bool		isnull;
	Datum		d;
	char	   *scope;

	if (cfg->scope_kind == FENCE_SCOPE_NONE)
		return NULL;
	if (cfg->scope_kind == FENCE_SCOPE_CONSTANT)
		return cfg->scope_name;

	d = row_attr(tuple, cfg->scope_attnum, RelationGetDescr(rel), &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("scope column \"%s\" of relation \"%s\" is null",
						cfg->scope_column, RelationGetRelationName(rel)),
				 errdetail("Every row of a table fenced by a scope column belongs to a scope."),
				 errtable(rel)));
	scope = scope_text(cfg, d, digits);
	/* a number's text is never empty, too long or invalid */
	if (cfg->scope_int_type == InvalidOid)
		fencing_check_scope_name(scope);
	return scope;
}

/* Whether an UPDATE leaves the row in its scope, without naming it twice. */
static bool
scope_unchanged(Relation rel, const FenceConfig *cfg, HeapTuple oldtuple,
				HeapTuple newtuple)
{
	Form_pg_attribute att;
	bool		oldnull;
	bool		newnull;
	Datum		oldval;
	Datum		newval;

	if (cfg->scope_kind != FENCE_SCOPE_COLUMN)
		return true;
	att = TupleDescAttr(RelationGetDescr(rel), cfg->scope_attnum - 1);
	oldval = row_attr(oldtuple, cfg->scope_attnum, RelationGetDescr(rel), &oldnull);
	newval = row_attr(newtuple, cfg->scope_attnum, RelationGetDescr(rel), &newnull);
	return !oldnull && !newnull &&
		datumIsEqual(oldval, newval, att->attbyval, att->attlen);
}

/*
 * The view through which st writes whose DEFAULT fills rel's token column
 * (running_statement.c: one rule for every statement kind and MERGE
 * action), or InvalidOid; only a token taken from the column asks.  Not
 * *certain: the statement is not known, and the view may be one it writes
 * through.
 */
static Oid
default_view(Relation rel, const FenceConfig *cfg, const FiringStatement *st, bool *certain)
{
	*certain = true;
	if (cfg->tokens != FENCE_TOKENS_COLUMN)
		return InvalidOid;
	return running_statement_view_default(st, rel, cfg->token_column, certain);
}

/*
 * The role a token in the row's column comes from: the current user, who
 * wrote the value, but not inside a foreign key's cascade, which runs as
 * the referencing table's owner (SECURITY_NOFORCE_RLS marks it): the value
 * comes from the referenced row, which the statement outside the cascade
 * wrote, so a raise needs the privilege of the role that ran it as well (a
 * SECURITY DEFINER function's owner, if that statement was the function's).
 * That statement unseen, having begun before the library was loaded: the
 * role is not known, and the write is refused (55000; the retry is seen).
 * A cascade no plan runs (logical replication apply): the session's role.
 */
static Oid
column_offerer(Relation rel, const FenceConfig *cfg, const char *scope)
{
	Oid			user;
	int			sec_context;

	GetUserIdAndSecContext(&user, &sec_context);
	if (sec_context & SECURITY_NOFORCE_RLS)
	{
		bool		unseen;
		Oid			outside = running_statement_cascade_user(&unseen);

		if (unlikely(unseen))
		{
			FiringStatement st = {.by = FIRED_BY_UNSEEN};

			reject_unseen(rel, cfg, scope, &st,
						  "which role wrote the value a foreign key's cascade copies into the token column");
		}
		return OidIsValid(outside) ? outside : GetOuterUserId();
	}
	return user;
}

/*
 * The token a write carries.  A declared token always wins: a column value
 * may only agree with it (or, in an UPDATE, be the row's own token left in
 * place, as an ORM writing back the row it read does).  Without a
 * declaration, the token column counts if the statement assigned it, and
 * not through a view that gives it a DEFAULT (default_view(), asked here
 * for every write that brings the column, whatever statement or MERGE
 * action fired: the rewriter fills the default in before any trigger runs).
 * st, the statement that fired, is read only when newtuple brings it.
 * Sets the role offering the token (security/scope_acl.h): the role that
 * declared it, or the current user writing the column; and *in_row (unless
 * NULL), whether newtuple's token column holds the token already.
 */
static int64
incoming_token(Relation rel, const FenceConfig *cfg, const char *scope,
			   HeapTuple newtuple, HeapTuple oldtuple, bool column_assigned,
			   const FiringStatement *st, bool *in_row)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int64		declared;
	int64		column;
	int64		previous;
	bool		has_column;
	Oid			declared_by;
	Oid			view = InvalidOid;
	bool		certain = true;

	has_column = cfg->tokens == FENCE_TOKENS_COLUMN && column_assigned &&
		newtuple != NULL && row_token(newtuple, desc, cfg, &column);
	if (has_column)
		view = default_view(rel, cfg, st, &certain);

	if (declared_token_lookup_offerer(scope, &declared, &declared_by))
	{
		if (has_column && column != declared && !(OidIsValid(view) && certain) &&
			!(oldtuple != NULL && row_token(oldtuple, desc, cfg, &previous) &&
			  previous == column))
			reject_conflict(rel, cfg, scope, column, declared);
		fencing_check_token(declared);
		(void) scope_acl_set_offerer(declared_by);
		if (in_row != NULL)
			*in_row = has_column && column == declared;
		return declared;
	}
	if (has_column && OidIsValid(view) && !certain)
		reject_unseen(rel, cfg, scope, st,
					  psprintf("whether it writes through view \"%s.%s\", whose DEFAULT may fill column \"%s\"",
							   get_namespace_name(get_rel_namespace(view)), get_rel_name(view),
							   cfg->token_column));
	if (has_column && OidIsValid(view))
	{
		FenceWrite	w = {rel, scope, where_written(rel, cfg, scope)};

		fence_reject_view_default(&w, cfg->token_column, view);
	}
	if (!has_column)
		reject_missing(rel, cfg, scope);
	fencing_check_token(column);
	(void) scope_acl_set_offerer(column_offerer(rel, cfg, scope));
	if (in_row != NULL)
		*in_row = true;
	return column;
}

/*
 * The token with which an UPDATE moving a row out of old_scope (into
 * new_scope) removes it from there: the token declared for old_scope (or
 * for every scope); else, with tokens => 'column' and no declaration for
 * either scope, the token column the statement assigned, the write's one
 * token.  A token declared for new_scope alone is that scope's: it never
 * admits the row out of another, and then the write has no token for
 * old_scope (ZF002).
 */
static int64
leaving_token(Relation rel, const FenceConfig *cfg, const char *old_scope,
			  const char *new_scope, HeapTuple newtuple, bool column_assigned,
			  Oid *offerer)
{
	int64		token;
	FenceWrite	w;

	if (declared_token_lookup_offerer(old_scope, &token, offerer))
	{
		fencing_check_token(token);
		return token;
	}
	if (!declared_token_lookup(new_scope, &token))
	{
		/* incoming_token() took the assigned column, checked, for new_scope */
		Assert(cfg->tokens == FENCE_TOKENS_COLUMN && column_assigned);
		if (!row_token(newtuple, RelationGetDescr(rel), cfg, &token))
			elog(ERROR, "the token of a row moving out of scope \"%s\" is gone", old_scope);
		*offerer = column_offerer(rel, cfg, old_scope);
		return token;
	}
	w.rel = rel;
	w.scope = old_scope;
	w.where = where_written(rel, cfg, old_scope);
	fence_reject_missing_leaving(&w, new_scope);
}

/*
 * Whether an UPDATE assigned the token column.  A MERGE hands the trigger
 * the columns of all its UPDATE actions together: it is asked of the action
 * running, by attribute number (of the relation the trigger fired for, views
 * and partitions mapped by the planner); when that cannot be told, the
 * column is not taken.  A statement no hook saw: ASSIGNS_UNKNOWN.
 */
typedef enum
{
	ASSIGNS_NO,
	ASSIGNS_YES,
	ASSIGNS_UNKNOWN
} Assigns;

static Assigns
update_assigns_token(const TriggerData *trigdata, const FenceConfig *cfg,
					 const FiringStatement *st)
{
	if (!bms_is_member(cfg->token_attnum - FirstLowInvalidHeapAttributeNumber,
					   trigdata->tg_updatedcols))
		return ASSIGNS_NO;
	if (st->by != FIRED_BY_PLAN)
	{
		/* the active portal's own statement, or not known */
		if (st->operation == CMD_UPDATE || st->operation == CMD_INSERT)
			return ASSIGNS_YES;
		switch (running_statement_portal_merge_assigns(st, RelationGetRelid(trigdata->tg_relation),
													   cfg->token_attnum))
		{
			case 1:
				return ASSIGNS_YES;
			case 0:
				return ASSIGNS_NO;
			default:
				return ASSIGNS_UNKNOWN;
		}
	}
#if PG_VERSION_NUM >= 150000
	if (st->by == FIRED_BY_PLAN && st->operation == CMD_MERGE)
	{
		List	   *colnos;

		if (running_statement_merge_action(st, &colnos) != CMD_UPDATE)
			return ASSIGNS_NO;
		return list_member_int(colnos, cfg->token_attnum) ? ASSIGNS_YES : ASSIGNS_NO;
	}
#endif
	return ASSIGNS_YES;
}

/*
 * Whether the statement no hook saw assigned the token column (in its
 * tg_updatedcols): a changed token was assigned (by the statement, or by a
 * trigger before this one); an unchanged one decides nothing when a token
 * was declared; otherwise it may be a MERGE action that does not assign the
 * column, or an UPDATE writing the row's own token again: refused.
 */
static bool
unseen_update_assigns_token(const TriggerData *trigdata, const FenceConfig *cfg,
							const char *scope, const FiringStatement *st)
{
	Relation	rel = trigdata->tg_relation;
	TupleDesc	desc = RelationGetDescr(rel);
	int64		before;
	int64		after;
	int64		declared;
	bool		has_after = row_token(trigdata->tg_newtuple, desc, cfg, &after);
	bool		has_before = row_token(trigdata->tg_trigtuple, desc, cfg, &before);

	if (has_after != has_before || (has_after && after != before))
		return has_after;
	if (cfg->tokens != FENCE_TOKENS_COLUMN || declared_token_lookup(scope, &declared))
		return false;
	reject_unseen(rel, cfg, scope, st,
				  psprintf("whether it assigned column \"%s\" (a MERGE action that does not assign it leaves the row's token in place)",
						   cfg->token_column));
	return false;				/* keep compiler quiet */
}

/* Check a scope's mark; NULL scope (per-row fencing) always passes. */
static bool
check_scope(Relation rel, const FenceConfig *cfg, const char *scope,
			int64 token, ScopeHold **hold)
{
	int64		mark;

	*hold = NULL;
	/* a scope column may name only scopes the table's owner may write to */
	if (scope == NULL ||
		scope_mark_check(scope, token, &mark, hold, rel,
						 cfg->scope_kind == FENCE_SCOPE_COLUMN))
		return true;
	return reject_stale(rel, cfg, scope, token, mark, false);
}

/* check_scope() for the scope an UPDATE moves the row out of. */
static bool
check_leaving_scope(Relation rel, const FenceConfig *cfg, const char *old_scope,
					const char *new_scope, int64 token, ScopeHold **hold)
{
	int64		mark;
	FenceWrite	w;

	*hold = NULL;
	if (scope_mark_check(old_scope, token, &mark, hold, rel, true))
		return true;
	w.rel = rel;
	w.scope = old_scope;
	w.where = psprintf("%s, which the row leaves for scope \"%s\"",
					   where_written(rel, cfg, old_scope), new_scope);
	return fence_reject_stale(&w, token, mark, false,
							  cfg->on_stale == FENCE_ON_STALE_SKIP);
}

/*
 * Check the row's own token, the per-row mark.  *raises: the write raises
 * it (the token is above the row's).
 */
static bool
check_row(Relation rel, const FenceConfig *cfg, HeapTuple oldtuple,
		  const char *scope, int64 token, bool *raises)
{
	int64		stored;

	*raises = false;
	if (!row_token(oldtuple, RelationGetDescr(rel), cfg, &stored))
		return true;
	*raises = token > stored;
	if (token >= stored)
		return true;
	return reject_stale(rel, cfg, scope, token, stored, true);
}

/*
 * A table fenced per row keeps its marks in the rows: an UPDATE storing a
 * higher token raises one.  Offered by another role than the one running
 * the write (a declaration before a foreign key's cascade or a SECURITY
 * DEFINER function), the offerer needs UPDATE on the token column too, as
 * a scope's raise needs its write privilege (security/scope_acl.c).
 */
static void
require_row_raise(Relation rel, const FenceConfig *cfg, int64 token)
{
	Oid			offerer = scope_acl_offerer();
	const char *offerer_name;

	if (offerer == GetUserId() ||
		pg_attribute_aclcheck(RelationGetRelid(rel), cfg->token_attnum, offerer,
							  ACL_UPDATE) == ACLCHECK_OK)
		return;
	offerer_name = GetUserNameFromId(offerer, true);
	if (offerer_name == NULL)
		offerer_name = psprintf("%u", offerer);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to raise the token of a row of relation \"%s\"",
					RelationGetRelationName(rel)),
			 errdetail("Role \"%s\" offered token " INT64_FORMAT " for a write that runs as role \"%s\" "
					   "(a foreign key's cascade, a SECURITY DEFINER function); raising a row's token "
					   "needs UPDATE on column \"%s\" for both, and role \"%s\" does not have it.",
					   offerer_name, token, GetUserNameFromId(GetUserId(), true),
					   cfg->token_column, offerer_name),
			 errtable(rel)));
}

/*
 * Every check passed: raise what the write raises.  Without a scope the
 * row's token is the only mark: a raise of it must survive a crash like a
 * scope mark does.
 */
static void
confirm(Relation rel, const FenceConfig *cfg, ScopeHold *hold, bool raises_row, int64 token)
{
	if (hold != NULL)
		scope_mark_confirm(hold, token, rel);
	if (raises_row && cfg->scope_kind == FENCE_SCOPE_NONE)
		fencing_require_durable_commit();
}

/* Some check failed (policy "skip"): the holds taken for the row go back. */
static HeapTuple
left_out(ScopeHold *hold1, ScopeHold *hold2)
{
	if (hold1 != NULL)
		scope_mark_abandon(hold1);
	if (hold2 != NULL)
		scope_mark_abandon(hold2);
	return NULL;
}

/* Store the token in the new row, converting to the column's type. */
static HeapTuple
store_token(Relation rel, const FenceConfig *cfg, HeapTuple tuple, int64 token)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int64		current;
	Datum		value;
	bool		isnull = false;
	int			attnum = cfg->token_attnum;

	if (row_token(tuple, desc, cfg, &current) && current == token)
		return tuple;
	if ((cfg->token_type == INT2OID && token > PG_INT16_MAX) ||
		(cfg->token_type == INT4OID && token > PG_INT32_MAX))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("fencing token " INT64_FORMAT " is out of range for column \"%s\" of relation \"%s\"",
						token, cfg->token_column, RelationGetRelationName(rel)),
				 errhint("Use a bigint token column."),
				 errtable(rel)));
	switch (cfg->token_type)
	{
		case INT2OID:
			value = Int16GetDatum((int16) token);
			break;
		case INT4OID:
			value = Int32GetDatum((int32) token);
			break;
		default:
			value = Int64GetDatum(token);
			break;
	}
	return heap_modify_tuple_by_cols(tuple, desc, 1, &attnum, &value, &isnull);
}

/*
 * Whether the relation has the AFTER INSERT trigger that raises deferred
 * marks, and it fires (as Postgres decides for this session's replication
 * role): the relcache's trigger list, no catalog lookup.
 */
static bool
has_deferred_raise_trigger(Relation rel, Oid fn_oid)
{
	TriggerDesc *trigdesc = rel->trigdesc;

	for (int i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
	{
		const Trigger *t = &trigdesc->triggers[i];

		if (t->tgfoid == fn_oid && TRIGGER_FOR_ROW(t->tgtype) &&
			TRIGGER_FOR_AFTER(t->tgtype) && TRIGGER_FOR_INSERT(t->tgtype) &&
			t->tgenabled != TRIGGER_DISABLED &&
			(SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA ?
			 t->tgenabled != TRIGGER_FIRES_ON_ORIGIN :
			 t->tgenabled != TRIGGER_FIRES_ON_REPLICA))
			return true;
	}
	return false;
}

/*
 * A raise that only the AFTER INSERT trigger may make, and it would not
 * fire: refused rather than lost (or made for a row never written).
 */
static void
reject_no_inserted_trigger(Relation rel, const FenceConfig *cfg, const char *scope, int64 token)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the fence of relation \"%s\" lacks its AFTER INSERT trigger",
					RelationGetRelationName(rel)),
			 errdetail("%s: token " INT64_FORMAT " raises the mark, which INSERT ... ON CONFLICT does only for a row it writes, from the trigger \"zz_fence_inserted\"; it is missing or does not fire.",
					   where_written(rel, cfg, scope), token),
			 errhint("Run fencing.protect() on the table again."),
			 errtable(rel)));
}

static HeapTuple
fence_insert(TriggerData *trigdata, const FenceConfig *cfg, const FiringStatement *st)
{
	Relation	rel = trigdata->tg_relation;
	HeapTuple	newtuple = trigdata->tg_trigtuple;
	ScopeDigits digits;
	const char *scope = row_scope(rel, newtuple, cfg, &digits);
	bool		in_row;
	int64		token = incoming_token(rel, cfg, scope, newtuple, NULL, true, st, &in_row);
	ScopeHold  *hold;

	if (!check_scope(rel, cfg, scope, token, &hold))
		return NULL;

	/*
	 * INSERT ... ON CONFLICT may not write this row: a raise waits for the
	 * AFTER INSERT trigger, which fires only for rows written.  So does the
	 * raise of a statement no hook saw, not known (it may be one): the
	 * outcome is the same for a row that is written.
	 */
	if (hold != NULL && !scope_mark_admits_without_raise(hold, token) &&
		(st->on_conflict || (st->by == FIRED_BY_UNSEEN && st->operation == CMD_UNKNOWN)))
	{
		if (has_deferred_raise_trigger(rel, trigdata->tg_trigger->tgfoid))
		{
			scope_mark_defer(hold, running_statement_defer_key(st, trigdata));
			return in_row ? newtuple : store_token(rel, cfg, newtuple, token);
		}
		if (st->by == FIRED_BY_UNSEEN)
			reject_unseen(rel, cfg, scope, st,
						  "whether the row will be written (INSERT ... ON CONFLICT), and the table lacks the AFTER INSERT trigger that raises the mark only for a row written");
		reject_no_inserted_trigger(rel, cfg, scope, token);
	}
	confirm(rel, cfg, hold, false, token);
	return in_row ? newtuple : store_token(rel, cfg, newtuple, token);
}

/* AFTER INSERT: the row was written; raise the mark its BEFORE trigger deferred. */
static void
fence_inserted(Relation rel, const FenceConfig *cfg, HeapTuple newtuple)
{
	ScopeDigits digits;
	const char *scope = row_scope(rel, newtuple, cfg, &digits);
	int64		token;
	int64		declared;
	Oid			declared_by;

	if (scope == NULL || !row_token(newtuple, RelationGetDescr(rel), cfg, &token))
		return;
	/* offered as its BEFORE trigger found it: declared, or the current user's column */
	(void) scope_acl_set_offerer(declared_token_lookup_offerer(scope, &declared, &declared_by) ?
								 declared_by : column_offerer(rel, cfg, scope));
	(void) scope_mark_raise_deferred(scope, token, rel);
}

static HeapTuple
fence_update(TriggerData *trigdata, const FenceConfig *cfg, const FiringStatement *st)
{
	Relation	rel = trigdata->tg_relation;
	HeapTuple	oldtuple = trigdata->tg_trigtuple;
	HeapTuple	newtuple = trigdata->tg_newtuple;
	ScopeDigits new_digits;
	ScopeDigits old_digits;
	const char *new_scope = row_scope(rel, newtuple, cfg, &new_digits);
	const char *old_scope = scope_unchanged(rel, cfg, oldtuple, newtuple) ?
		new_scope : row_scope(rel, oldtuple, cfg, &old_digits);
	int64		token;			/* for new_scope, and stored in the row */
	int64		old_token;		/* for old_scope, and the row's own mark */
	bool		assigned;
	bool		in_row;			/* newtuple holds token */
	Oid			new_offerer;	/* the role that offered token */
	Oid			old_offerer;	/* the role that offered old_token */
	ScopeHold  *new_hold;
	ScopeHold  *old_hold = NULL;
	bool		raises_row;
	Assigns		assigns = update_assigns_token(trigdata, cfg, st);

	assigned = assigns == ASSIGNS_UNKNOWN ?
		unseen_update_assigns_token(trigdata, cfg, new_scope, st) :
		assigns == ASSIGNS_YES;
	token = incoming_token(rel, cfg, new_scope, newtuple, oldtuple, assigned, st, &in_row);
	new_offerer = scope_acl_offerer();
	old_token = token;
	old_offerer = new_offerer;

	/* the same scope (pointers equal) unless the scope column changed */
	if (old_scope != new_scope && strcmp(old_scope, new_scope) != 0)
	{
		/* the row leaves old_scope: that scope admits it with its own token */
		old_token = leaving_token(rel, cfg, old_scope, new_scope, newtuple, assigned,
								  &old_offerer);
		if (!check_scope(rel, cfg, new_scope, token, &new_hold))
			return NULL;
		/* each token is judged for the role that offered it */
		(void) scope_acl_set_offerer(old_offerer);
		if (!check_leaving_scope(rel, cfg, old_scope, new_scope, old_token, &old_hold))
			return left_out(new_hold, NULL);
	}
	else if (!check_scope(rel, cfg, new_scope, token, &new_hold))
		return NULL;
	if (!check_row(rel, cfg, oldtuple, old_scope, old_token, &raises_row))
		return left_out(new_hold, old_hold);
	if (raises_row && cfg->scope_kind == FENCE_SCOPE_NONE)
		require_row_raise(rel, cfg, token);

	/* each scope is raised (if at all) with its own token */
	(void) scope_acl_set_offerer(new_offerer);
	confirm(rel, cfg, new_hold, raises_row, token);
	(void) scope_acl_set_offerer(old_offerer);
	if (old_hold != NULL)
		scope_mark_confirm(old_hold, old_token, rel);

	/* the DELETE half of a partition move removes the row from old_scope */
	moving_row.statement = st->id;
	moving_row.trigger = trigdata->tg_trigger;
	moving_row.tid = oldtuple->t_self;
	moving_row.token = old_token;
	moving_row.offerer = old_offerer;

	return in_row ? newtuple : store_token(rel, cfg, newtuple, token);
}

/*
 * Whether a DELETE fired by st may be the DELETE half of a row moving to
 * another partition: an UPDATE, or a MERGE running an UPDATE action.  A
 * statement no hook saw may be; the tuple and the trigger's copy decide.
 */
static bool
may_move_row(const FiringStatement *st)
{
	if (st->by == FIRED_BY_UNSEEN)
		return st->operation != CMD_DELETE && st->operation != CMD_INSERT;
	if (st->by != FIRED_BY_PLAN)
		return false;
#if PG_VERSION_NUM >= 150000
	if (st->operation == CMD_MERGE)
	{
		List	   *colnos;

		return running_statement_merge_action(st, &colnos) == CMD_UPDATE;
	}
#endif
	return st->operation == CMD_UPDATE;
}

static HeapTuple
fence_delete(TriggerData *trigdata, const FenceConfig *cfg, const FiringStatement *st)
{
	Relation	rel = trigdata->tg_relation;
	HeapTuple	oldtuple = trigdata->tg_trigtuple;
	ScopeDigits digits;
	const char *scope = row_scope(rel, oldtuple, cfg, &digits);
	int64		token;
	ScopeHold  *hold;
	bool		raises_row;

	if (moving_row.statement != 0 &&
		moving_row.statement == st->id &&
		moving_row.trigger == trigdata->tg_trigger &&
		ItemPointerEquals(&moving_row.tid, &oldtuple->t_self) &&
		may_move_row(st))
	{
		/* the DELETE half of this row's move to another partition */
		token = moving_row.token;
		(void) scope_acl_set_offerer(moving_row.offerer);
		moving_row.statement = 0;
	}
	else
		token = incoming_token(rel, cfg, scope, NULL, oldtuple, false, NULL, NULL);

	if (!check_scope(rel, cfg, scope, token, &hold))
		return NULL;
	if (!check_row(rel, cfg, oldtuple, scope, token, &raises_row))
		return left_out(hold, NULL);
	confirm(rel, cfg, hold, raises_row, token);
	return oldtuple;
}

/* The largest token the rows of a table carry, or the distinct scopes they name. */
typedef struct TruncatedRows
{
	bool		any_token;		/* some row carries a token */
	int64		max_token;
	HTAB	   *scopes;			/* scope name -> TruncatedScope, column scopes */
} TruncatedRows;

typedef struct TruncatedScope
{
	char		scope[FENCING_SCOPE_MAX_LEN + 1];	/* hash key */
} TruncatedScope;

static int
compare_scope_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Add the scopes or the largest token of the rows of r (attnum: the column read). */
static void
scan_truncated(Relation r, const FenceConfig *cfg, AttrNumber attnum, TruncatedRows *rows)
{
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	TableScanDesc scan = table_beginscan(r, snapshot, 0, NULL);
	TupleTableSlot *slot = table_slot_create(r, NULL);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, attnum, &isnull);

		CHECK_FOR_INTERRUPTS();
		if (isnull)
			continue;
		if (cfg->scope_kind == FENCE_SCOPE_COLUMN)
		{
			ScopeDigits digits;
			char	   *scope = scope_text(cfg, d, &digits);

			fencing_check_scope_name(scope);
			(void) hash_search(rows->scopes, scope, HASH_ENTER, NULL);
			if (scope != digits.text)
				pfree(scope);
		}
		else
		{
			int64		token = fence_token_value(cfg->token_type, d);

			if (!rows->any_token || token > rows->max_token)
				rows->max_token = token;
			rows->any_token = true;
		}
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	UnregisterSnapshot(snapshot);
}

/*
 * A Citus table's own relation (its shell) has no rows: they are in its
 * shards.  The shards this node holds are read here, locked as TRUNCATE will
 * lock them: Citus keeps TRUNCATE triggers off a Citus-local table's shard
 * (the table's own trigger, this one, fires for it), and a shard elsewhere
 * judges its rows with its own trigger.  A local shard not found under
 * Citus's name for it: refused; so is a Citus-local table whose shard is on
 * another node (a worker truncating it): nothing there would judge its rows.
 */
static void
read_citus_shards(Relation rel, const FenceConfig *cfg, TruncatedRows *rows)
{
	char	   *unfound;
	List	   *shards = citus_local_shards(rel, &unfound);
	ListCell   *lc;
	const char *column = cfg->scope_kind == FENCE_SCOPE_COLUMN ?
		cfg->scope_column : cfg->token_column;

	if (unfound != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot check the rows of relation \"%s\" before TRUNCATE",
						RelationGetRelationName(rel)),
				 errdetail("%s: this node holds a shard of it that is not named \"%s\".",
						   where_written(rel, cfg, NULL), unfound),
				 errtable(rel)));
	/* Citus keeps a Citus-local table's shard without TRUNCATE trigger */
	if (shards == NIL && citus_is_local_table(RelationGetRelid(rel)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot truncate fenced Citus-local table \"%s\" from this node",
						RelationGetRelationName(rel)),
				 errdetail("%s: its shard is on the coordinator and has no TRUNCATE trigger of its own (Citus drops it), so only the coordinator can check its rows.",
						   where_written(rel, cfg, NULL)),
				 errhint("Run TRUNCATE on the coordinator."),
				 errtable(rel)));
	foreach(lc, shards)
	{
		Relation	shard = table_open(lfirst_oid(lc), AccessExclusiveLock);
		AttrNumber	attnum = get_attnum(lfirst_oid(lc), column);

		/* a shard made after a column was dropped numbers its columns anew */
		if (attnum == InvalidAttrNumber)
			elog(ERROR, "column \"%s\" of shard \"%s\" does not exist",
				 column, RelationGetRelationName(shard));
		scan_truncated(shard, cfg, attnum, rows);
		table_close(shard, NoLock);
	}
}

/*
 * Read the rows TRUNCATE is about to throw away, straight from the heap: no
 * query, so no planner (which would evaluate the IMMUTABLE functions of the
 * table's index expressions and predicates) and no other code of the
 * table's owner runs here.  Only a scope column's output function is called,
 * as the caller (a built-in one: fence_config.c admits only base types whose
 * text is stable, and domains over them).  A fresh snapshot: the statement's
 * was taken before TRUNCATE's exclusive lock was granted and can miss rows
 * committed meanwhile.
 */
static void
read_truncated_rows(Relation rel, const FenceConfig *cfg, TruncatedRows *rows)
{
	AttrNumber	attnum = cfg->scope_kind == FENCE_SCOPE_COLUMN ?
		cfg->scope_attnum : cfg->token_attnum;

	rows->any_token = false;
	rows->max_token = 0;
	rows->scopes = NULL;
	if (cfg->scope_kind == FENCE_SCOPE_COLUMN)
		rows->scopes = fencing_scope_hash_create("fencing truncated scopes",
												 sizeof(TruncatedScope),
												 CurrentMemoryContext);

	/*
	 * A partitioned table has no rows: each partition fires its own trigger.
	 * Nothing else without storage can carry a TRUNCATE trigger (Postgres
	 * refuses one on a foreign table or a view); fail closed all the same.
	 */
	if (!RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
	{
		if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
			return;
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check the rows of relation \"%s\" before TRUNCATE",
						RelationGetRelationName(rel)),
				 errdetail("%s: only tables stored in this database can be truncated under the fence.",
						   where_written(rel, cfg, NULL)),
				 errtable(rel)));
	}
	scan_truncated(rel, cfg, attnum, rows);
	if (unlikely(cfg->citus_shell))
		read_citus_shards(rel, cfg, rows);
}

/*
 * TRUNCATE throws away every row and its token at once: the transaction must
 * have declared a token that every scope in the table (or, fenced per row
 * only, every row) admits, also when the table is empty or its rows carry no
 * token.  A TRUNCATE is never skipped: with either policy it fails.
 */
static void
fence_truncate(Relation rel, const FenceConfig *cfg)
{
	FenceConfig strict = *cfg;
	TruncatedRows rows;
	int64		token = 0;
	int64		mark;

	strict.on_stale = FENCE_ON_STALE_ERROR;

	if (cfg->scope_kind == FENCE_SCOPE_CONSTANT)
	{
		token = incoming_token(rel, cfg, cfg->scope_name, NULL, NULL, false, NULL, NULL);
		if (!scope_mark_admit(cfg->scope_name, token, &mark, rel, false))
			(void) reject_stale(rel, &strict, cfg->scope_name, token, mark, false);
		return;
	}
	if (cfg->scope_kind == FENCE_SCOPE_NONE)
		token = incoming_token(rel, cfg, NULL, NULL, NULL, false, NULL, NULL);
	else if (!declared_token_any())
		reject_missing(rel, cfg, NULL);

	read_truncated_rows(rel, cfg, &rows);

	if (cfg->scope_kind == FENCE_SCOPE_COLUMN)
	{
		long		n = hash_get_num_entries(rows.scopes);
		const char **names = palloc(sizeof(char *) * (n > 0 ? n : 1));
		HASH_SEQ_STATUS status;
		TruncatedScope *entry;
		long		i = 0;

		/* in name order: the first stale scope reported is always the same */
		hash_seq_init(&status, rows.scopes);
		while ((entry = hash_seq_search(&status)) != NULL)
			names[i++] = entry->scope;
		qsort(names, n, sizeof(char *), compare_scope_names);
		for (i = 0; i < n; i++)
		{
			token = incoming_token(rel, cfg, names[i], NULL, NULL, false, NULL, NULL);
			if (!scope_mark_admit(names[i], token, &mark, rel, true))
				(void) reject_stale(rel, &strict, names[i], token, mark, false);
		}
		hash_destroy(rows.scopes);
	}
	else if (rows.any_token && token < rows.max_token)
		(void) reject_stale(rel, &strict, NULL, token, rows.max_token, true);
}

/*
 * The fence row triggers of a relation (BEFORE ROW, this function), from
 * *next on: each is a configuration the table is fenced by.  Postgres keeps
 * a partition's in step with its current parent (its clone).  TRUNCATE and
 * the AFTER INSERT trigger judge by every one of them, as every one judges
 * each row: none is picked by its name or its place (a second one, made by
 * hand or renamed, only adds its checks).  With none the table is not
 * protected (a partition detached from its protected parent keeps our
 * TRUNCATE trigger): nothing to judge.
 */
static const Trigger *
next_fence_row_trigger(Relation rel, Oid fn_oid, int *next)
{
	TriggerDesc *trigdesc = rel->trigdesc;

	for (; trigdesc != NULL && *next < trigdesc->numtriggers; (*next)++)
	{
		const Trigger *t = &trigdesc->triggers[*next];

		if (t->tgfoid == fn_oid && TRIGGER_FOR_ROW(t->tgtype) &&
			TRIGGER_FOR_BEFORE(t->tgtype))
		{
			(*next)++;
			return t;
		}
	}
	return NULL;
}

/* A write let through by fencing.bypass: counted for its table and scope. */
static void
count_bypass(Relation rel, const FenceConfig *cfg, HeapTuple tuple)
{
	const char *scope = NULL;
	ScopeDigits digits;

	if (cfg->scope_kind == FENCE_SCOPE_CONSTANT)
		scope = cfg->scope_name;
	else if (cfg->scope_kind == FENCE_SCOPE_COLUMN && tuple != NULL)
	{
		bool		isnull;
		Datum		d = row_attr(tuple, cfg->scope_attnum, RelationGetDescr(rel), &isnull);

		/* no error here: the bypass lets even a row without a scope through */
		if (!isnull)
			scope = scope_text(cfg, d, &digits);
		if (scope != NULL && (scope[0] == '\0' || strlen(scope) > FENCING_SCOPE_MAX_LEN))
			scope = NULL;
	}
	fence_count_bypass(rel, scope);
}

static void
protocol_violation(Relation rel, const char *requirement)
{
	ereport(ERROR,
			(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
			 errmsg("fence trigger on relation \"%s\" must be fired %s",
					RelationGetRelationName(rel), requirement),
			 errhint("Install the trigger with fencing.protect().")));
}

/*
 * Scope marks live in each node's own fencing.scopes, and terms are issued
 * on the coordinator.  Until the coordinator distributes its marks
 * (fencing.distribute_marks(): state/cluster_marks.c), a Citus worker's
 * copy of a scope would be created, or raised, by the first write that
 * reaches it, with that write's token, and would never see a takeover on
 * the coordinator: so a worker then judges no write by scope; it refuses
 * it (before any scope is read, created or locked), whatever table it is:
 * the answer does not hang on recognising a shard (a backend may have
 * resolved the table before Citus recorded it as one).  Once marks are
 * distributed, a worker judges by its copy of the coordinator's marks,
 * which no write raises (marks/scope_mark.c), and only while that copy is
 * current: a worker that missed the coordinator's feeds (disabled or
 * removed, then activated or added again) refuses every write by scope
 * (55000) until it is fed every scope again (state/citus_shards.c).  A node
 * fed as a worker stays one when Citus's metadata stops saying so.  The
 * coordinator's own shards (a Citus-local table's, a reference table's
 * placement) are judged by its marks, the clock.  Without Citus (cfg->citus_node, cached with
 * the configuration) this is one test.
 */
static void
refuse_scope_on_citus_worker(Relation rel, const FenceConfig *cfg)
{
	Oid			table;
	const char *shown;
	const char *stale;
	const char *what;

	if (likely(!cfg->citus_node) ||
		cfg->scope_kind == FENCE_SCOPE_NONE ||
		!citus_node_is_worker())
		return;
	stale = NULL;
	if (cluster_marks_enabled() && (stale = citus_node_marks_stale()) == NULL)
	{
		/* admitted under a feed lease: judged again before it commits */
		citus_node_lease_note_write();
		return;
	}
	table = citus_shard_table_uncached(rel);
	shown = OidIsValid(table) ? get_rel_name(table) : NULL;
	if (shown == NULL)
		shown = RelationGetRelationName(rel);
	/* the table, its scope and the shard, as every DETAIL below names them */
	what = psprintf("Relation \"%s.%s\", %s, written on \"%s\"",
					get_namespace_name(RelationGetNamespace(rel)), shown,
					cfg->scope_kind == FENCE_SCOPE_CONSTANT ?
					psprintf("scope \"%s\"", cfg->scope_name) :
					psprintf("scope column \"%s\"", cfg->scope_column),
					RelationGetRelationName(rel));
	if (stale != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot fence relation \"%s\" by scope: this Citus worker's marks are not current", shown),
				 errdetail("%s: %s.", what, stale),
				 errhint("Run SELECT fencing.distribute_marks() on the coordinator (a superuser): it feeds every scope to every node."),
				 errtable(rel)));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot fence relation \"%s\" by scope on a Citus worker", shown),
			 errdetail("%s on a Citus worker: the coordinator has not distributed its marks, so this worker can neither check the token against %s mark nor raise it.",
					   what, cfg->scope_kind == FENCE_SCOPE_CONSTANT ? "the scope's" : "a scope's"),
			 errhint("Run SELECT fencing.distribute_marks() on the coordinator (a superuser): from then on every node has the coordinator's marks."),
			 errtable(rel)));
}

/* TRUNCATE, under every fence row trigger's configuration (above). */
static void
judge_truncate(Relation rel, Oid fn_oid)
{
	const Trigger *row_trigger;
	int			next = 0;

	row_trigger = next_fence_row_trigger(rel, fn_oid, &next);
	if (row_trigger == NULL)
		return;					/* not protected (any more) */
	if (fencing_bypass_active())
	{
		count_bypass(rel, fence_config_get(rel, row_trigger), NULL);
		return;
	}
	if (replica_passes(rel))
		return;
	do
	{
		const FenceConfig *cfg = fence_config_get(rel, row_trigger);

		refuse_scope_on_citus_worker(rel, cfg);
		fence_config_require_binding(rel, cfg);
		fence_truncate(rel, cfg);
	} while ((row_trigger = next_fence_row_trigger(rel, fn_oid, &next)) != NULL);
}

/*
 * Whether an INSERT that an interim fence judges is Citus's copy of a
 * shard's rows into its new placement (COPY ... FROM STDIN, sent by the
 * source node; for a split's child on the same node, the copy in the
 * backend of the split): the table is placed on no node here yet (the
 * operation has not committed), the backend serves one of Citus's own
 * connections, and its role is a superuser or has the privileges of the
 * table's owner (Citus connects as the role running the operation, which
 * must own the table).  Those rows were judged on the source shard.  A
 * client's write is judged: it would have to run as a role that may
 * switch the fence off anyway (ALTER TABLE ... DISABLE TRIGGER) and pose
 * as Citus (its application name) to be let in.
 */
static bool
citus_fills_new_placement(Relation rel)
{
	return citus_internal_backend() &&
		(superuser() || has_privs_of_role(GetUserId(), rel->rd_rel->relowner)) &&
		!citus_shard_placed_here(rel);
}

static Datum judge(FunctionCallInfo fcinfo);

FENCING_FUNCTION(fencing_fence_trigger);

/* The offerer set while judging a row is the caller's again afterwards. */
Datum
fencing_fence_trigger(PG_FUNCTION_ARGS)
{
	Oid			caller_offerer = scope_acl_set_offerer(InvalidOid);
	Datum		result = judge(fcinfo);

	(void) scope_acl_set_offerer(caller_offerer);
	return result;
}

static Datum
judge(FunctionCallInfo fcinfo)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TriggerEvent event;
	Relation	rel;
	const FenceConfig *cfg;
	FiringStatement st;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence_trigger: not called by trigger manager")));
	event = trigdata->tg_event;
	rel = trigdata->tg_relation;

	if (TRIGGER_FIRED_BY_TRUNCATE(event))
	{
		if (!TRIGGER_FIRED_BEFORE(event))
			protocol_violation(rel, "BEFORE TRUNCATE");
		judge_truncate(rel, trigdata->tg_trigger->tgfoid);
		return PointerGetDatum(NULL);
	}
	if (!TRIGGER_FIRED_FOR_ROW(event))
		protocol_violation(rel, "FOR EACH ROW");
	/*
	 * Citus copying a table's rows into the shards it has just made in this
	 * transaction (distributing a protected table with history) is no
	 * client's write: those rows were fenced when they were written, and
	 * nobody else sees the new placement before this transaction commits
	 * (also the coordinator's own placement, which Citus makes and fills
	 * through a connection to itself: citus_shard_filled_by_its_creator()).
	 * One compare for every other write (the relation was not created in
	 * this transaction).
	 */
	if (unlikely(rel->rd_createSubid != InvalidSubTransactionId) &&
		TRIGGER_FIRED_BY_INSERT(event) &&
		citus_shard_filled_by_its_creator(rel, trigdata->tg_trigger->tgfoid))
		return TRIGGER_FIRED_AFTER(event) ? PointerGetDatum(NULL) :
			PointerGetDatum(trigdata->tg_trigtuple);
	/*
	 * Likewise Citus copying the rows of a shard into the new shard table of
	 * a shard move, copy or split, which it creates and fills in
	 * transactions of their own: the table has only the interim fence
	 * (internal triggers, trigger/protect.c) until Citus gives it its own
	 * triggers, and no placement here until the operation commits.  One
	 * compare for every other write.
	 */
	if (unlikely(trigdata->tg_trigger->tgisinternal) &&
		TRIGGER_FIRED_BY_INSERT(event) && citus_fills_new_placement(rel))
		return TRIGGER_FIRED_AFTER(event) ? PointerGetDatum(NULL) :
			PointerGetDatum(trigdata->tg_trigtuple);
	if (TRIGGER_FIRED_AFTER(event))
	{
		/* only beside the BEFORE ROW fence, whose deferred raises it makes */
		Oid			fn_oid = trigdata->tg_trigger->tgfoid;
		const Trigger *row_trigger;
		int			next = 0;

		if (!TRIGGER_FIRED_BY_INSERT(event) ||
			next_fence_row_trigger(rel, fn_oid, &next) == NULL)
			protocol_violation(rel, "BEFORE the write");
		if (fencing_bypass_active())
			return PointerGetDatum(NULL);
		/* refuses whom it must; a raise deferred before is made all the same */
		(void) replica_passes(rel);
		next = 0;
		while ((row_trigger = next_fence_row_trigger(rel, fn_oid, &next)) != NULL)
		{
			cfg = fence_config_get(rel, row_trigger);
			refuse_scope_on_citus_worker(rel, cfg);
			fence_inserted(rel, cfg, trigdata->tg_trigtuple);
		}
		return PointerGetDatum(NULL);
	}

	cfg = fence_config_get(rel, trigdata->tg_trigger);

	if (fencing_bypass_active())
	{
		count_bypass(rel, cfg, TRIGGER_FIRED_BY_UPDATE(event) ?
					 trigdata->tg_newtuple : trigdata->tg_trigtuple);
		return TRIGGER_FIRED_BY_UPDATE(event) ?
			PointerGetDatum(trigdata->tg_newtuple) :
			PointerGetDatum(trigdata->tg_trigtuple);
	}
	if (replica_passes(rel))
	{
		HeapTuple	row = TRIGGER_FIRED_BY_UPDATE(event) ?
			trigdata->tg_newtuple : trigdata->tg_trigtuple;
		int64		token;

		/* a logical copy's rows carry its source's terms: the clock goes above them */
		if (!TRIGGER_FIRED_BY_DELETE(event) && row_token(row, RelationGetDescr(rel), cfg, &token))
			restored_fence_note_token(token);
		return PointerGetDatum(row);
	}

	refuse_scope_on_citus_worker(rel, cfg);
	/* a fixed scope: the table's owner may write to it, whoever made the trigger */
	fence_config_require_binding(rel, cfg);

	/* a copy: statements run meanwhile (by the checks) reuse the answer's storage */
	st = *running_statement_firing(trigdata, fcinfo->flinfo->fn_mcxt);
	if (TRIGGER_FIRED_BY_INSERT(event))
		return PointerGetDatum(fence_insert(trigdata, cfg, &st));
	if (TRIGGER_FIRED_BY_UPDATE(event))
		return PointerGetDatum(fence_update(trigdata, cfg, &st));
	return PointerGetDatum(fence_delete(trigdata, cfg, &st));
}
