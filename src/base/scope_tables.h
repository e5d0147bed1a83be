/*-------------------------------------------------------------------------
 *
 * scope_tables.h
 *	  Backend-local hash tables keyed by scope, and the pseudo-OID whose
 *	  relcache invalidation stands for a scope.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SCOPE_TABLES_H
#define SCOPE_TABLES_H

#include "fencing.h"

#include "access/transam.h"
#include "common/hashfn.h"
#include "utils/hsearch.h"

/* A table keyed by scope name (FENCING_SCOPE_MAX_LEN + 1 bytes), in cxt. */
extern HTAB *fencing_scope_hash_create(const char *name, Size entrysize,
									   MemoryContext cxt);

/*
 * The hash of a scope's name in the tables above (string_hash() of a name
 * shorter than their key size), and the pseudo-OID whose relcache
 * invalidation stands for the scope: above FirstNormalObjectId, derived from
 * the hash (marks/mark_cache.c says why a relcache message).  Formulas, not
 * functions: the scope stays in the code that holds it.
 */
#define scope_hash(scope) \
	hash_bytes((const unsigned char *) (scope), (int) strlen(scope))
#define scope_inval_id_of_hash(hash) \
	((Oid) (FirstNormalObjectId + (uint32) (hash) % ((uint32) PG_UINT32_MAX - FirstNormalObjectId)))
#define scope_inval_id(scope) scope_inval_id_of_hash(scope_hash(scope))

/*
 * Tables keyed by a scope's pseudo-OID (the mark cache, the scope bindings):
 * the table, created in cxt on first use and emptied rather than grown past
 * max entries, ready for one more entry (the caller enters its key); and
 * dropping a table (any message that may concern all of it).
 */
extern HTAB *scope_table_ready(HTAB **table, const char *name, Size entrysize,
							   MemoryContext cxt, long max);
extern void scope_table_drop(HTAB **table);

#endif							/* SCOPE_TABLES_H */
