/*-------------------------------------------------------------------------
 *
 * mark_cache.h
 *	  Backend-local cache of committed scope marks, kept exact by Postgres's
 *	  shared invalidation messages.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MARK_CACHE_H
#define MARK_CACHE_H

#include "fencing.h"

#include "utils/hsearch.h"

#include "marks/scope_lock.h"

extern void mark_cache_init(void);

/*
 * Caller holds the scope lock; get/put also need mark_cache_sync() first.
 * A read of the table goes between mark_cache_read_start() and
 * mark_cache_put(), which caches nothing if the scope was invalidated
 * meanwhile.
 */
extern void mark_cache_sync(void);
/*
 * "id" is mark_cache_inval_id(scope), which callers may keep.  With the mark
 * goes what the scope is locked by (id 0: no such scope).
 */
extern bool mark_cache_get(Oid id, const char *scope, int64 *mark, ScopeKey *key);
extern uint64 mark_cache_read_start(Oid id);
extern void mark_cache_put(Oid id, const char *scope, int64 mark, const ScopeKey *key,
						   uint64 read_start);
extern void mark_cache_forget(const char *scope);

/* The pseudo-OID whose relcache invalidation stands for the scope. */
extern Oid	mark_cache_inval_id(const char *scope);

/*
 * Backend-local tables keyed by a scope's pseudo-OID (this cache, and the
 * scope bindings of security/scope_binding.c): the entry for key, the table
 * created in cxt on first use and emptied rather than grown past max
 * entries; and dropping a table (any message that may concern all of it).
 */
extern void *scope_table_enter(HTAB **table, const char *name, Size entrysize,
							   MemoryContext cxt, long max, Oid key);
extern void scope_table_drop(HTAB **table);

/* A scope's row is being written: every backend forgets it at commit. */
extern void mark_cache_invalidate_scope(const char *scope);

/* fencing.scopes as a whole: every backend drops its cache at commit. */
extern void mark_cache_invalidate_all(void);

#endif							/* MARK_CACHE_H */
