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

#include "utils/hsearch.h"

/* A table keyed by scope name (FENCING_SCOPE_MAX_LEN + 1 bytes), in cxt. */
extern HTAB *fencing_scope_hash_create(const char *name, Size entrysize,
									   MemoryContext cxt);

/*
 * The pseudo-OID whose relcache invalidation stands for the scope: above
 * FirstNormalObjectId, derived from the hash of the name (marks/mark_cache.c
 * says why a relcache message).
 */
extern Oid	scope_inval_id(const char *scope);

/*
 * The hash of a scope's name in the tables above (as the tables compute
 * it), and the invalidation id derived from it: a caller that needs both
 * hashes the name once.
 */
extern uint32 scope_hash(const char *scope);
extern Oid	scope_inval_id_of_hash(uint32 hash);

/*
 * Tables keyed by a scope's pseudo-OID (the mark cache, the scope bindings):
 * the entry for key, the table created in cxt on first use and emptied
 * rather than grown past max entries; and dropping a table (any message that
 * may concern all of it).
 */
extern void *scope_table_enter(HTAB **table, const char *name, Size entrysize,
							   MemoryContext cxt, long max, Oid key);
extern void scope_table_drop(HTAB **table);

#endif							/* SCOPE_TABLES_H */
