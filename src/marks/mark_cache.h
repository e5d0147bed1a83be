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

#include "base/scope_tables.h"
#include "marks/scope_lock.h"

/* A relation or scope changed (InvalidOid: all); called by relcache_watch.c. */
extern void mark_cache_relcache_changed(Oid relid);
/* Called by end_of_xact.c, in its order. */
extern void mark_cache_at_xact_end(void);

/*
 * Caller holds the scope lock; get/put also need mark_cache_sync() first.
 * A read of the table goes between mark_cache_read_start() and
 * mark_cache_put(), which caches nothing if the scope was invalidated
 * meanwhile.
 */
extern void mark_cache_sync(void);
/*
 * "id" is scope_inval_id(scope), which callers may keep.  With the mark
 * goes what the scope is locked by (id 0: no such scope).
 */
extern bool mark_cache_get(Oid id, const char *scope, int64 *mark, ScopeKey *key,
						   bool locked);
typedef struct MarkReadStart
{
	uint64		local;			/* this backend's count of messages */
	uint64		shared;			/* the shared cache's stamp */
} MarkReadStart;

extern void mark_cache_read_start(Oid id, MarkReadStart *start);
/*
 * Whether a read may go to the marks shared with other backends: never
 * (not the scope's latest row version), now (read under the scope lock), or
 * once this backend finds it again under the lock (read to learn the id).
 */
typedef enum MarkShare
{
	MARK_PRIVATE,
	MARK_SHARE_NOW,
	MARK_SHARE_WHEN_LOCKED
} MarkShare;

extern void mark_cache_put(Oid id, const char *scope, int64 mark, const ScopeKey *key,
						   const MarkReadStart *start, MarkShare share);
/* This backend, and the marks shared in memory, forget a scope, or all. */
extern void mark_cache_forget(const char *scope);
extern void mark_cache_forget_all(void);

#endif							/* MARK_CACHE_H */
