/*-------------------------------------------------------------------------
 *
 * fence_config.h
 *	  How a protected table is fenced: its token column, its scope and its
 *	  policy, as given in the fence trigger's arguments.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCE_CONFIG_H
#define FENCE_CONFIG_H

#include "fencing.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/rel.h"

/*
 * Trigger arguments: token column, policy, scope kind, [scope value],
 * [token source]:
 *   ('tok', 'error', 'row')             per-row marks only
 *   ('tok', 'error', 'scope', 'name')   one scope for the whole table
 *   ('tok', 'skip',  'column', 'col')   the scope is the value of a column
 *   (..., 'tokens=declared')            only declared tokens count (1.2)
 * or, as fencing.protect() installs the trigger from 1.4 on, the same list
 * as one argument, a text array literal: ('{tok,error,column,col}').  The
 * executor copies every argument of every trigger of a table at each
 * statement, so one argument costs less than four.
 */
typedef enum FenceScopeKind
{
	FENCE_SCOPE_NONE,
	FENCE_SCOPE_CONSTANT,
	FENCE_SCOPE_COLUMN
} FenceScopeKind;

typedef enum FenceOnStale
{
	FENCE_ON_STALE_ERROR,
	FENCE_ON_STALE_SKIP
} FenceOnStale;

typedef enum FenceTokens
{
	FENCE_TOKENS_COLUMN,		/* the token column, or the declared token */
	FENCE_TOKENS_DECLARED		/* the declared token only; the fence writes the column */
} FenceTokens;

typedef struct FenceConfig
{
	Oid			tgoid;			/* hash key: the trigger */
	Oid			relid;
	bool		valid;
	char		token_column[NAMEDATALEN];
	AttrNumber	token_attnum;
	Oid			token_type;		/* INT2OID, INT4OID or INT8OID */
	FenceOnStale on_stale;
	FenceTokens tokens;
	FenceScopeKind scope_kind;
	char		scope_name[FENCING_SCOPE_MAX_LEN + 1];	/* constant scope */
	char		scope_column[NAMEDATALEN];	/* column scope */
	AttrNumber	scope_attnum;
	FmgrInfo	scope_output;	/* output function of the scope column */
	bool		scope_is_bpchar;	/* char(n): trailing blanks are padding */
	Oid			scope_int_type;	/* INT2OID, INT4OID or INT8OID (or a domain over
								 * one): the text is the decimal number */
	Oid			citus_table;	/* a Citus shard's distributed table, else InvalidOid */
	bool		citus_shell;	/* a Citus table: its rows are in its shards */
	bool		citus_node;		/* Citus was installed when this was resolved */
	bool		bound;			/* the owner's right to the fixed scope was checked */
	uint64		bound_generation;	/* ... at this scope_binding_generation() */
} FenceConfig;

/* A value of a token column of type "type" (INT2OID, INT4OID or INT8OID) as a token. */
static inline int64
fence_token_value(Oid type, Datum d)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

extern void fence_config_init(void);

/* A relation changed (InvalidOid: all); called by relcache_watch.c. */
extern void fence_config_relcache_changed(Oid relid);

/* The checked configuration of a fence trigger; cached per trigger. */
extern const FenceConfig *fence_config_get(Relation rel, const Trigger *trigger);

/*
 * A fixed scope binds the table only if its owner may write to the scope
 * (42501 otherwise), whoever made the trigger; checked again only after a
 * change the answer depends on.
 */
extern void fence_config_require_binding(Relation rel, const FenceConfig *cfg);

/* Check trigger arguments against a relation, erroring on anything wrong. */
extern void fence_config_resolve(Relation rel, int nargs, char **args,
								 FenceConfig *cfg);

/* The arguments in one, as fencing.protect() gives them (a palloc'd string). */
extern char *fence_config_pack(int nargs, char **args);

/* The arguments a packed one holds, or false when "arg" is not packed. */
extern bool fence_config_unpack(const char *arg, int *nargs, char ***args);

/* "column" or "declared", as protect() takes it. */
extern FenceTokens parse_token_source(const char *source);

#endif							/* FENCE_CONFIG_H */
