/*-------------------------------------------------------------------------
 *
 * fence_config.c
 *	  Checking the fence trigger's arguments against its table, once; and
 *	  the one argument, a text array literal, protect() packs them into.
 *
 * The same checks run when fencing.protect() installs the trigger and when a
 * trigger created by hand first fires.  Results are cached per trigger and
 * dropped on any relcache invalidation of the table (a renamed or dropped
 * column is caught on the next write).
 *
 *-------------------------------------------------------------------------
 */
#include "base/input_checks.h"
#include "security/scope_acl.h"
#include "state/citus_shards.h"
#include "trigger/fence_config.h"

#include "access/attnum.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "parser/scansup.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"

static HTAB *configs = NULL;	/* tgoid -> FenceConfig, in CacheMemoryContext */

void
fence_config_relcache_changed(Oid relid)
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

/*
 * Scope names are the text of the scope column: only types whose text is the
 * same whatever the session's DateStyle, TimeZone, extra_float_digits or
 * lc_* settings, and one text per value (numeric 1.0 and 1.00 are equal but
 * print differently).
 */
static bool
scope_type_is_stable(Oid basetype)
{
	switch (basetype)
	{
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case NAMEOID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case UUIDOID:
			return true;
		default:
			return false;
	}
}

/*
 * The packed form is a text array literal, written and read here as
 * array_out() writes one: an element is double-quoted (backslash before a
 * quote or a backslash) when it is empty, is NULL in any case, or holds a
 * brace, quote, backslash, comma or white space.  Reading never errors: a
 * string of another shape (or with a NULL element) is not packed.
 */
static bool
needs_quotes(const char *item)
{
	if (item[0] == '\0' || pg_strcasecmp(item, "NULL") == 0)
		return true;
	for (const char *c = item; *c; c++)
		if (strchr("{}\",\\", *c) != NULL || scanner_isspace(*c))
			return true;
	return false;
}

char *
fence_config_pack(int nargs, char **args)
{
	StringInfoData packed;

	initStringInfo(&packed);
	appendStringInfoChar(&packed, '{');
	for (int i = 0; i < nargs; i++)
	{
		bool		quoted = needs_quotes(args[i]);

		if (i > 0)
			appendStringInfoChar(&packed, ',');
		if (quoted)
			appendStringInfoChar(&packed, '"');
		for (const char *c = args[i]; *c; c++)
		{
			if (quoted && (*c == '"' || *c == '\\'))
				appendStringInfoChar(&packed, '\\');
			appendStringInfoChar(&packed, *c);
		}
		if (quoted)
			appendStringInfoChar(&packed, '"');
	}
	appendStringInfoChar(&packed, '}');
	return packed.data;
}

static const char *
skip_space(const char *c)
{
	while (scanner_isspace(*c))
		c++;
	return c;
}

bool
fence_config_unpack(const char *arg, int *nargs, char ***args)
{
	const char *c = arg;
	/* the elements unescaped, each ended by a NUL where its separator was */
	char	   *out = palloc(strlen(arg) + 1);
	List	   *items = NIL;
	ListCell   *lc;
	int			i = 0;

	if (*c++ != '{')
		return false;
	for (;;)
	{
		char	   *item = out;

		c = skip_space(c);
		if (*c == '"')
		{
			for (c++; *c != '"'; c++)
			{
				if (*c == '\\')
					c++;
				if (*c == '\0')
					return false;
				*out++ = *c;
			}
			c = skip_space(c + 1);
		}
		else
		{
			while (*c != '\0' && strchr("{}\",\\", *c) == NULL)
				*out++ = *c++;
			/* white space around an unquoted element is not part of it */
			while (out > item && scanner_isspace(out[-1]))
				out--;
			*out = '\0';
			if (out == item || pg_strcasecmp(item, "NULL") == 0)
				return false;
		}
		*out++ = '\0';
		items = lappend(items, item);
		if (*c == '}' && *skip_space(c + 1) == '\0')
			break;
		if (*c++ != ',')
			return false;
	}
	*nargs = list_length(items);
	*args = palloc(*nargs * sizeof(char *));
	foreach(lc, items)
		(*args)[i++] = lfirst(lc);
	return true;
}

void
fence_config_resolve(Relation rel, int nargs, char **args, FenceConfig *cfg)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Form_pg_attribute att;
	Form_pg_attribute token_att;
	int			nfixed;

	/* one argument: the list packed */
	if (nargs == 1 && !fence_config_unpack(args[0], &nargs, &args))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("invalid argument for the fence trigger on relation \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("A single argument holds the arguments as a text array literal without nulls, such as '{tok,error,row}': \"%s\" is not one.",
						   args[0]),
				 errhint("Install the trigger with fencing.protect().")));
	if (nargs < 3 || nargs > 5)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence trigger on relation \"%s\" has %d arguments, expected 3 to 5",
						RelationGetRelationName(rel), nargs),
				 errhint("Install the trigger with fencing.protect().")));

	/* every byte defined: the result is copied whole into the cache */
	memset(cfg, 0, sizeof(*cfg));
	cfg->relid = RelationGetRelid(rel);
	/* InvalidOid without a catalog read unless the name is a shard's */
	cfg->citus_table = citus_shard_table(rel);
	cfg->citus_shell = citus_is_citus_table(cfg->relid);
	cfg->citus_node = citus_installed();

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
	token_att = att;

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
	nfixed = strcmp(args[2], "row") == 0 ? 3 : 4;
	if (strcmp(args[2], "row") == 0 && nargs <= 4)
		cfg->scope_kind = FENCE_SCOPE_NONE;
	else if (strcmp(args[2], "scope") == 0 && nargs >= 4)
	{
		cfg->scope_kind = FENCE_SCOPE_CONSTANT;
		fencing_check_scope_name(args[3]);
		strlcpy(cfg->scope_name, args[3], sizeof(cfg->scope_name));
	}
	else if (strcmp(args[2], "column") == 0 && nargs >= 4)
	{
		Oid			typoutput;
		bool		typisvarlena;
		Oid			basetype;

		cfg->scope_kind = FENCE_SCOPE_COLUMN;
		strlcpy(cfg->scope_column, args[3], NAMEDATALEN);
		cfg->scope_attnum = find_column(rel, args[3], "scope");
		if (cfg->scope_attnum == cfg->token_attnum)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("scope column and token column of relation \"%s\" must differ",
							RelationGetRelationName(rel))));
		att = TupleDescAttr(desc, cfg->scope_attnum - 1);
		if (att->attgenerated)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_COLUMN_DEFINITION),
					 errmsg("scope column \"%s\" of relation \"%s\" must not be a generated column",
							args[3], RelationGetRelationName(rel)),
					 errdetail("A generated column is computed after the fence has judged the row.")));
		basetype = getBaseType(att->atttypid);
		if (!scope_type_is_stable(basetype))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("scope column \"%s\" of relation \"%s\" must be of a type whose text does not depend on session settings",
							args[3], RelationGetRelationName(rel)),
					 errdetail("Column \"%s\" is of type %s.",
							   args[3], format_type_be(att->atttypid)),
					 errhint("Use a column of type text, varchar, char(n), name, smallint, integer, bigint or uuid, "
							 "or a domain over one of them.")));
		getTypeOutputInfo(att->atttypid, &typoutput, &typisvarlena);
		cfg->scope_is_bpchar = basetype == BPCHAROID;
		cfg->scope_int_type = basetype == INT2OID || basetype == INT4OID ||
			basetype == INT8OID ? basetype : InvalidOid;
		fmgr_info_cxt(typoutput, &cfg->scope_output, CacheMemoryContext);
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("invalid scope arguments for the fence trigger on relation \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("The third argument is \"row\", or \"scope\" or \"column\" followed by a name."),
				 errhint("Install the trigger with fencing.protect().")));

	/* token source */
	cfg->tokens = FENCE_TOKENS_COLUMN;
	if (nargs > nfixed)
	{
		if (nargs > nfixed + 1 || strncmp(args[nfixed], "tokens=", 7) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
					 errmsg("invalid arguments for the fence trigger on relation \"%s\"",
							RelationGetRelationName(rel)),
					 errhint("Install the trigger with fencing.protect().")));
		cfg->tokens = parse_token_source(args[nfixed] + 7);
	}

	/*
	 * A token must come from the writer, never from the table definition: a
	 * DEFAULT or IDENTITY would give every write that names no token one.
	 * With declared tokens only, the column's own value is never read.
	 */
	if (cfg->tokens == FENCE_TOKENS_COLUMN &&
		(token_att->atthasdef || token_att->attidentity))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_DEFINITION),
				 token_att->attidentity ?
				 errmsg("token column \"%s\" of relation \"%s\" must not be an identity column",
						args[0], RelationGetRelationName(rel)) :
				 errmsg("token column \"%s\" of relation \"%s\" must not have a default",
						args[0], RelationGetRelationName(rel)),
				 errdetail("A write that names no token would carry the %s as its token.",
						   token_att->attidentity ? "identity value" : "default"),
				 errhint("ALTER TABLE %s ALTER COLUMN %s %s, "
						 "or protect the table with tokens => 'declared'.",
						 quote_identifier(RelationGetRelationName(rel)),
						 quote_identifier(args[0]),
						 token_att->attidentity ? "DROP IDENTITY" : "DROP DEFAULT")));
}

FenceTokens
parse_token_source(const char *source)
{
	if (strcmp(source, "column") == 0)
		return FENCE_TOKENS_COLUMN;
	if (strcmp(source, "declared") == 0)
		return FENCE_TOKENS_DECLARED;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid token source \"%s\"", source),
			 errhint("The token source is \"column\" (the token column, or the declared token) "
					 "or \"declared\" (only tokens declared with fencing.use_token()).")));
	return FENCE_TOKENS_COLUMN;	/* keep compiler quiet */
}

const FenceConfig *
fence_config_get(Relation rel, const Trigger *trigger)
{
	static FenceConfig *last = NULL;	/* the entry found last */
	FenceConfig *cfg;
	FenceConfig resolved;
	bool		found;

	/* entries are never removed, only marked invalid: the pointer holds */
	if (last != NULL && last->tgoid == trigger->tgoid && last->valid &&
		last->relid == RelationGetRelid(rel))
		return last;
	cfg = hash_search(configs, &trigger->tgoid, HASH_FIND, &found);
	if (found && cfg->valid && cfg->relid == RelationGetRelid(rel))
		return last = cfg;

	/* resolve first: a trigger with bad arguments leaves no cache entry */
	fence_config_resolve(rel, trigger->tgnargs, trigger->tgargs, &resolved);
	cfg = hash_search(configs, &trigger->tgoid, HASH_ENTER, &found);
	*cfg = resolved;
	cfg->tgoid = trigger->tgoid;
	cfg->valid = true;
	return last = cfg;
}

void
fence_config_require_binding(Relation rel, const FenceConfig *cfg)
{
	FenceConfig *cached = (FenceConfig *) cfg;
	uint64		generation;

	if (cfg->scope_kind != FENCE_SCOPE_CONSTANT)
		return;
	generation = scope_binding_generation();
	if (cfg->bound && cfg->bound_generation == generation)
		return;
	scope_binding_require_fixed(rel, cfg->scope_name);
	/* the answer as of the generation read before it was sought */
	cached->bound = true;
	cached->bound_generation = generation;
}

/*
 * fencing.trigger_arguments(tgargs bytea): the arguments of a trigger as a
 * text array, for the protected_tables view (a fence trigger's packed
 * argument as the arguments it holds).  pg_trigger.tgargs holds them
 * NUL-terminated; any byte but NUL may be in one (backslashes included),
 * but the text returned must be valid in the database's encoding: a
 * superuser can write any bytes into the catalog.
 */
FENCING_FUNCTION(fencing_trigger_arguments);

Datum
fencing_trigger_arguments(PG_FUNCTION_ARGS)
{
	bytea	   *raw = PG_GETARG_BYTEA_PP(0);
	const char *p = VARDATA_ANY(raw);
	const char *end = p + VARSIZE_ANY_EXHDR(raw);
	List	   *given = NIL;
	int			nargs;
	char	  **args;
	ArrayBuildState *astate = NULL;

	while (p < end)
	{
		size_t		len = strnlen(p, end - p);

		/* text must be valid in the database encoding (22021 otherwise) */
		(void) pg_verifymbstr(p, len, false);
		given = lappend(given, pnstrdup(p, len));
		p += len + 1;
	}
	/* one packed argument: the arguments it holds */
	if (list_length(given) != 1 || !fence_config_unpack(linitial(given), &nargs, &args))
	{
		nargs = list_length(given);
		args = palloc((nargs + 1) * sizeof(char *));
		for (int i = 0; i < nargs; i++)
			args[i] = list_nth(given, i);
	}
	for (int i = 0; i < nargs; i++)
		astate = accumArrayResult(astate, CStringGetTextDatum(args[i]),
								  false, TEXTOID, CurrentMemoryContext);
	if (astate == NULL)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(TEXTOID));
	PG_RETURN_DATUM(makeArrayResult(astate, CurrentMemoryContext));
}
