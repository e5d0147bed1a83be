/*-------------------------------------------------------------------------
 *
 * fence_trigger.c
 *	  fencing.fence_trigger(): rejects writes whose token is below a mark.
 *
 * Installed by fencing.protect() as a BEFORE ROW trigger for INSERT, UPDATE
 * and DELETE and a BEFORE STATEMENT trigger for TRUNCATE.  For each row:
 *
 *   1. the incoming token is the token column when the statement assigned it
 *      (for UPDATE, per tg_updatedcols: an UPDATE that leaves the column alone
 *      does not inherit the row's token), else the token the transaction
 *      declared with fencing.use_token(); no token at all is an error;
 *   2. with a scope, it is admitted against the scope's mark, which it raises
 *      when higher (see marks/scope_mark.c);
 *   3. UPDATE and DELETE compare it with the row's stored token (the per-row
 *      mark; OLD is the latest, locked version of the row);
 *   4. an accepted INSERT or UPDATE stores the token in the row.
 *
 * A stale write fails (policy "error") or is left out (policy "skip").
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "nodes/bitmapset.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "marks/scope_mark.h"
#include "security/bypass.h"
#include "state/extension_state.h"
#include "tokens/declared_token.h"
#include "trigger/fence_config.h"

/*
 * A row moving between partitions fires BEFORE UPDATE on the source, then
 * BEFORE DELETE there (with no NEW row) and BEFORE INSERT on the target.  The
 * token admitted for the UPDATE is remembered so that its DELETE half uses it.
 */
static struct
{
	Oid			relid;
	LocalTransactionId lxid;
	CommandId	cid;
	int64		token;
} last_update = {InvalidOid, InvalidLocalTransactionId, InvalidCommandId, 0};

/* "Relation "public.t", scope "s"" or "Relation "public.t" (per-row fencing)" */
static char *
where_written(Relation rel, const FenceConfig *cfg, const char *scope)
{
	char	   *relname = psprintf("%s.%s",
									   get_namespace_name(RelationGetNamespace(rel)),
									   RelationGetRelationName(rel));

	if (cfg->scope_kind == FENCE_SCOPE_NONE)
		return psprintf("Relation \"%s\" (per-row fencing)", relname);
	return psprintf("Relation \"%s\", scope \"%s\"", relname, scope);
}

static bool
reject_stale(Relation rel, const FenceConfig *cfg, const char *scope,
			 int64 token, int64 mark, bool row_mark)
{
	if (cfg->on_stale == FENCE_ON_STALE_SKIP)
	{
		ereport(DEBUG1,
				(errmsg("skipping stale write to relation \"%s\": token " INT64_FORMAT
						" is below mark " INT64_FORMAT,
						RelationGetRelationName(rel), token, mark)));
		return false;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_STALE_TOKEN),
			 errmsg("stale fencing token for relation \"%s\"",
					RelationGetRelationName(rel)),
			 row_mark ?
			 errdetail("%s: token " INT64_FORMAT " is below the row's token " INT64_FORMAT ".",
					   where_written(rel, cfg, scope), token, mark) :
			 errdetail("%s: token " INT64_FORMAT " is below the scope's mark " INT64_FORMAT ".",
					   where_written(rel, cfg, scope), token, mark),
			 errhint("A newer term has been issued; the writer holding token " INT64_FORMAT
					 " is no longer the leader and must stop writing.", token),
			 errtable(rel)));
	return false;				/* keep compiler quiet */
}

static void
reject_missing(Relation rel, const FenceConfig *cfg, const char *scope)
{
	ereport(ERROR,
			(errcode(ERRCODE_FENCING_MISSING_TOKEN),
			 errmsg("missing fencing token for relation \"%s\"",
					RelationGetRelationName(rel)),
			 errdetail("%s: the statement did not assign column \"%s\" "
					   "and the transaction declared no token.",
					   where_written(rel, cfg, scope), cfg->token_column),
			 cfg->scope_kind == FENCE_SCOPE_NONE ?
			 errhint("Assign column \"%s\", or call fencing.use_token(token) in this transaction.",
					 cfg->token_column) :
			 errhint("Assign column \"%s\", or call fencing.use_token('%s', token) in this transaction.",
					 cfg->token_column, scope),
			 errtable(rel)));
}

/* The token stored in a row, if any. */
static bool
row_token(HeapTuple tuple, TupleDesc desc, const FenceConfig *cfg, int64 *token)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, cfg->token_attnum, desc, &isnull);

	if (isnull)
		return false;
	switch (cfg->token_type)
	{
		case INT2OID:
			*token = DatumGetInt16(d);
			break;
		case INT4OID:
			*token = DatumGetInt32(d);
			break;
		default:
			*token = DatumGetInt64(d);
			break;
	}
	return true;
}

/*
 * The scope named by a scope column's value: its text form, without the
 * padding of char(n), as a cast to text gives it (and as fence_next_epoch()
 * is called with it).
 */
static char *
scope_text(const FenceConfig *cfg, Datum value)
{
	char	   *scope = OutputFunctionCall((FmgrInfo *) &cfg->scope_output, value);

	if (cfg->scope_is_bpchar)
	{
		size_t		len = strlen(scope);

		while (len > 0 && scope[len - 1] == ' ')
			scope[--len] = '\0';
	}
	return scope;
}

/* The scope a row belongs to; NULL for tables fenced per row only. */
static const char *
row_scope(Relation rel, HeapTuple tuple, const FenceConfig *cfg)
{
	bool		isnull;
	Datum		d;
	char	   *scope;

	if (cfg->scope_kind == FENCE_SCOPE_NONE)
		return NULL;
	if (cfg->scope_kind == FENCE_SCOPE_CONSTANT)
		return cfg->scope_name;

	d = heap_getattr(tuple, cfg->scope_attnum, RelationGetDescr(rel), &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("scope column \"%s\" of relation \"%s\" is null",
						cfg->scope_column, RelationGetRelationName(rel)),
				 errdetail("Every row of a table fenced by a scope column belongs to a scope."),
				 errtable(rel)));
	scope = scope_text(cfg, d);
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
	oldval = heap_getattr(oldtuple, cfg->scope_attnum, RelationGetDescr(rel), &oldnull);
	newval = heap_getattr(newtuple, cfg->scope_attnum, RelationGetDescr(rel), &newnull);
	return !oldnull && !newnull &&
		datumIsEqual(oldval, newval, att->attbyval, att->attlen);
}

/* Incoming token of a row from the token column or the declared token. */
static int64
incoming_token(Relation rel, const FenceConfig *cfg, HeapTuple newtuple,
			   bool column_assigned, const char *scope, bool *from_column)
{
	int64		token;

	*from_column = column_assigned && newtuple != NULL &&
		row_token(newtuple, RelationGetDescr(rel), cfg, &token);
	if (!*from_column && !declared_token_lookup(scope, &token))
		reject_missing(rel, cfg, scope);
	fencing_check_token(token);
	return token;
}

static bool
admit_scope(Relation rel, const FenceConfig *cfg, const char *scope, int64 token)
{
	int64		mark;

	if (scope == NULL || scope_mark_admit(scope, token, &mark))
		return true;
	return reject_stale(rel, cfg, scope, token, mark, false);
}

static bool
admit_row(Relation rel, const FenceConfig *cfg, HeapTuple oldtuple,
		  const char *scope, int64 token)
{
	int64		stored;

	if (!row_token(oldtuple, RelationGetDescr(rel), cfg, &stored))
		return true;
	if (token < stored)
		return reject_stale(rel, cfg, scope, token, stored, true);

	/*
	 * Without a scope the row's token is the only mark: a raise of it must
	 * survive a crash like a scope mark does (with a scope, the scope's mark
	 * was already made durable when it reached this token).
	 */
	if (token > stored && cfg->scope_kind == FENCE_SCOPE_NONE)
		fencing_require_durable_commit();
	return true;
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

static HeapTuple
fence_insert(Relation rel, const FenceConfig *cfg, HeapTuple newtuple)
{
	const char *scope = row_scope(rel, newtuple, cfg);
	bool		from_column;
	int64		token = incoming_token(rel, cfg, newtuple, true, scope, &from_column);

	if (!admit_scope(rel, cfg, scope, token))
		return NULL;
	return from_column ? newtuple : store_token(rel, cfg, newtuple, token);
}

static HeapTuple
fence_update(TriggerData *trigdata, const FenceConfig *cfg)
{
	Relation	rel = trigdata->tg_relation;
	HeapTuple	oldtuple = trigdata->tg_trigtuple;
	HeapTuple	newtuple = trigdata->tg_newtuple;
	const char *new_scope = row_scope(rel, newtuple, cfg);
	const char *old_scope = scope_unchanged(rel, cfg, oldtuple, newtuple) ?
		new_scope : row_scope(rel, oldtuple, cfg);
	bool		assigned;
	bool		from_column;
	int64		token;

	assigned = bms_is_member(cfg->token_attnum - FirstLowInvalidHeapAttributeNumber,
							 trigdata->tg_updatedcols);
	token = incoming_token(rel, cfg, newtuple, assigned, new_scope, &from_column);

	if (!admit_scope(rel, cfg, new_scope, token))
		return NULL;
	if (old_scope != NULL && strcmp(old_scope, new_scope) != 0 &&
		!admit_scope(rel, cfg, old_scope, token))
		return NULL;
	if (!admit_row(rel, cfg, oldtuple, old_scope, token))
		return NULL;

	last_update.relid = RelationGetRelid(rel);
	last_update.lxid = FENCING_MY_LXID;
	last_update.cid = GetCurrentCommandId(false);
	last_update.token = token;

	return store_token(rel, cfg, newtuple, token);
}

static HeapTuple
fence_delete(Relation rel, const FenceConfig *cfg, HeapTuple oldtuple)
{
	const char *scope = row_scope(rel, oldtuple, cfg);
	int64		token;

	if (last_update.relid == RelationGetRelid(rel) &&
		last_update.lxid == FENCING_MY_LXID &&
		last_update.cid == GetCurrentCommandId(false))
		token = last_update.token;	/* the DELETE half of a partition move */
	else
	{
		bool		from_column;

		token = incoming_token(rel, cfg, NULL, false, scope, &from_column);
	}

	if (!admit_scope(rel, cfg, scope, token) ||
		!admit_row(rel, cfg, oldtuple, scope, token))
		return NULL;
	return oldtuple;
}

/*
 * TRUNCATE throws away every row and its token at once: the transaction must
 * hold a token that every scope in the table (or, fenced per row only, every
 * row) admits.  A TRUNCATE is never skipped: with either policy it fails.
 */
static void
fence_truncate(Relation rel, const FenceConfig *cfg)
{
	FenceConfig strict = *cfg;
	int64		token;
	bool		from_column;

	strict.on_stale = FENCE_ON_STALE_ERROR;

	if (cfg->scope_kind == FENCE_SCOPE_CONSTANT)
	{
		token = incoming_token(rel, cfg, NULL, false, cfg->scope_name, &from_column);
		(void) admit_scope(rel, &strict, cfg->scope_name, token);
		return;
	}
	else
	{
		/* rows' scopes, or their largest token, read as the extension owner */
		StringInfoData sql;
		FencingUserContext uctx;
		SPITupleTable *rows;
		uint64		nrows;
		const char *relname = quote_qualified_identifier(
														 get_namespace_name(RelationGetNamespace(rel)),
														 RelationGetRelationName(rel));

		initStringInfo(&sql);
		if (cfg->scope_kind == FENCE_SCOPE_COLUMN)
			appendStringInfo(&sql, "SELECT DISTINCT %s FROM ONLY %s",
							 quote_identifier(cfg->scope_column), relname);
		else
			appendStringInfo(&sql, "SELECT pg_catalog.max(%s) FROM ONLY %s",
							 quote_identifier(cfg->token_column), relname);

		fencing_become_owner(&uctx);
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		/*
		 * A fresh snapshot: the statement's was taken before TRUNCATE's
		 * exclusive lock was granted and can miss rows committed meanwhile.
		 */
		if (SPI_execute_snapshot(SPI_prepare(sql.data, 0, NULL), NULL, NULL,
								 GetLatestSnapshot(), InvalidSnapshot,
								 true, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "reading scopes of relation \"%s\" failed",
				 RelationGetRelationName(rel));
		fencing_restore_user(&uctx);
		rows = SPI_tuptable;
		nrows = SPI_processed;

		for (uint64 i = 0; i < nrows; i++)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(rows->vals[i], rows->tupdesc, 1, &isnull);

			if (isnull)
				continue;
			if (cfg->scope_kind == FENCE_SCOPE_COLUMN)
			{
				char	   *scope = scope_text(cfg, d);

				token = incoming_token(rel, cfg, NULL, false, scope, &from_column);
				(void) admit_scope(rel, &strict, scope, token);
			}
			else
			{
				int64		stored = DatumGetInt64(d);

				if (cfg->token_type == INT2OID)
					stored = DatumGetInt16(d);
				else if (cfg->token_type == INT4OID)
					stored = DatumGetInt32(d);
				token = incoming_token(rel, cfg, NULL, false, NULL, &from_column);
				if (token < stored)
					(void) reject_stale(rel, &strict, NULL, token, stored, true);
			}
		}
		/* a table fenced per row only still needs a token to be truncated */
		if (cfg->scope_kind == FENCE_SCOPE_NONE && nrows == 0)
			(void) incoming_token(rel, cfg, NULL, false, NULL, &from_column);
		SPI_finish();
	}
}

PG_FUNCTION_INFO_V1(fence_trigger);

Datum
fence_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TriggerEvent event;
	Relation	rel;
	const FenceConfig *cfg;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence_trigger: not called by trigger manager")));
	event = trigdata->tg_event;
	rel = trigdata->tg_relation;

	if (TRIGGER_FIRED_BY_TRUNCATE(event))
	{
		if (!TRIGGER_FIRED_BEFORE(event))
			ereport(ERROR,
					(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
					 errmsg("fence trigger on relation \"%s\" must be fired BEFORE TRUNCATE",
							RelationGetRelationName(rel)),
					 errhint("Install the trigger with fencing.protect().")));
	}
	else
	{
		if (!TRIGGER_FIRED_FOR_ROW(event))
			ereport(ERROR,
					(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
					 errmsg("fence trigger on relation \"%s\" must be fired FOR EACH ROW",
							RelationGetRelationName(rel)),
					 errhint("Install the trigger with fencing.protect().")));
		if (!TRIGGER_FIRED_BEFORE(event))
			ereport(ERROR,
					(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
					 errmsg("fence trigger on relation \"%s\" must be fired BEFORE the write",
							RelationGetRelationName(rel)),
					 errhint("Install the trigger with fencing.protect().")));
	}

	cfg = fence_config_get(rel, trigdata->tg_trigger);

	if (fencing_bypass_active())
		return TRIGGER_FIRED_BY_UPDATE(event) ?
			PointerGetDatum(trigdata->tg_newtuple) :
			PointerGetDatum(trigdata->tg_trigtuple);

	if (TRIGGER_FIRED_BY_INSERT(event))
		return PointerGetDatum(fence_insert(rel, cfg, trigdata->tg_trigtuple));
	if (TRIGGER_FIRED_BY_UPDATE(event))
		return PointerGetDatum(fence_update(trigdata, cfg));
	if (TRIGGER_FIRED_BY_DELETE(event))
		return PointerGetDatum(fence_delete(rel, cfg, trigdata->tg_trigtuple));

	fence_truncate(rel, cfg);
	return PointerGetDatum(NULL);
}
