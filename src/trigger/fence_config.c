/*-------------------------------------------------------------------------
 *
 * fence_config.c
 *	  Checking the fence trigger's arguments against its table, once.
 *
 * The same checks run when fencing.protect() installs the trigger and when a
 * trigger created by hand first fires.  Results are cached per trigger and
 * dropped on any relcache invalidation of the table (a renamed or dropped
 * column is caught on the next write).
 *
 *-------------------------------------------------------------------------
 */
#include "trigger/fence_config.h"

#include "access/attnum.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

static HTAB *configs = NULL;	/* tgoid -> FenceConfig, in CacheMemoryContext */

static void
invalidate_configs(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	FenceConfig *cfg;

	if (configs == NULL)
		return;
	hash_seq_init(&status, configs);
	while ((cfg = hash_seq_search(&status)) != NULL)
	{
		if (relid == InvalidOid || cfg->relid == relid)
			cfg->valid = false;
	}
}

void
fence_config_init(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(FenceConfig);
	ctl.hcxt = CacheMemoryContext;
	configs = hash_create("fencing trigger configs", 32, &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	CacheRegisterRelcacheCallback(invalidate_configs, (Datum) 0);
}

static AttrNumber
find_column(Relation rel, const char *colname, const char *role)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), colname) == 0)
			return att->attnum;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("%s column \"%s\" of relation \"%s\" does not exist",
					role, colname, RelationGetRelationName(rel)),
			 errhint("Protect the table again with fencing.protect() after renaming a column.")));
	return InvalidAttrNumber;	/* keep compiler quiet */
}

void
fence_config_resolve(Relation rel, int nargs, char **args, FenceConfig *cfg)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Form_pg_attribute att;

	if (nargs != 3 && nargs != 4)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence trigger on relation \"%s\" has %d arguments, expected 3 or 4",
						RelationGetRelationName(rel), nargs),
				 errhint("Install the trigger with fencing.protect().")));

	/* every byte defined: the result is copied whole into the cache */
	memset(cfg, 0, sizeof(*cfg));
	cfg->relid = RelationGetRelid(rel);

	/* token column: an integer column the trigger may write */
	strlcpy(cfg->token_column, args[0], NAMEDATALEN);
	cfg->token_attnum = find_column(rel, args[0], "token");
	att = TupleDescAttr(desc, cfg->token_attnum - 1);
	cfg->token_type = att->atttypid;
	if (cfg->token_type != INT2OID && cfg->token_type != INT4OID &&
		cfg->token_type != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("token column \"%s\" of relation \"%s\" must be of type smallint, integer or bigint",
						args[0], RelationGetRelationName(rel)),
				 errdetail("Column \"%s\" is of type %s.",
						   args[0], format_type_be(cfg->token_type))));
	if (att->attgenerated)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_DEFINITION),
				 errmsg("token column \"%s\" of relation \"%s\" must not be a generated column",
						args[0], RelationGetRelationName(rel))));

	/* policy */
	if (strcmp(args[1], "error") == 0)
		cfg->on_stale = FENCE_ON_STALE_ERROR;
	else if (strcmp(args[1], "skip") == 0)
		cfg->on_stale = FENCE_ON_STALE_SKIP;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid fencing policy \"%s\"", args[1]),
				 errhint("The policy is \"error\" (the statement fails) or \"skip\" (the stale row is not written).")));

	/* scope */
	cfg->scope_name[0] = '\0';
	cfg->scope_column[0] = '\0';
	cfg->scope_attnum = InvalidAttrNumber;
	if (strcmp(args[2], "row") == 0 && nargs == 3)
		cfg->scope_kind = FENCE_SCOPE_NONE;
	else if (strcmp(args[2], "scope") == 0 && nargs == 4)
	{
		cfg->scope_kind = FENCE_SCOPE_CONSTANT;
		fencing_check_scope_name(args[3]);
		strlcpy(cfg->scope_name, args[3], sizeof(cfg->scope_name));
	}
	else if (strcmp(args[2], "column") == 0 && nargs == 4)
	{
		Oid			typoutput;
		bool		typisvarlena;

		cfg->scope_kind = FENCE_SCOPE_COLUMN;
		strlcpy(cfg->scope_column, args[3], NAMEDATALEN);
		cfg->scope_attnum = find_column(rel, args[3], "scope");
		if (cfg->scope_attnum == cfg->token_attnum)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("scope column and token column of relation \"%s\" must differ",
							RelationGetRelationName(rel))));
		getTypeOutputInfo(TupleDescAttr(desc, cfg->scope_attnum - 1)->atttypid,
						  &typoutput, &typisvarlena);
		cfg->scope_is_bpchar =
			getBaseType(TupleDescAttr(desc, cfg->scope_attnum - 1)->atttypid) == BPCHAROID;
		fmgr_info_cxt(typoutput, &cfg->scope_output, CacheMemoryContext);
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("invalid scope arguments for the fence trigger on relation \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("The third argument is \"row\" (3 arguments), or \"scope\" or \"column\" followed by a name."),
				 errhint("Install the trigger with fencing.protect().")));
}

const FenceConfig *
fence_config_get(Relation rel, const Trigger *trigger)
{
	FenceConfig *cfg;
	FenceConfig resolved;
	bool		found;

	cfg = hash_search(configs, &trigger->tgoid, HASH_FIND, &found);
	if (found && cfg->valid && cfg->relid == RelationGetRelid(rel))
		return cfg;

	/* resolve first: a trigger with bad arguments leaves no cache entry */
	fence_config_resolve(rel, trigger->tgnargs, trigger->tgargs, &resolved);
	cfg = hash_search(configs, &trigger->tgoid, HASH_ENTER, &found);
	*cfg = resolved;
	cfg->tgoid = trigger->tgoid;
	cfg->valid = true;
	return cfg;
}
