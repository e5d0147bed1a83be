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

extern void mark_cache_init(void);

/* Caller holds the scope lock; get/put also need mark_cache_sync() first. */
extern void mark_cache_sync(void);
extern bool mark_cache_get(const char *scope, int64 *mark);
extern void mark_cache_put(const char *scope, int64 mark);
extern void mark_cache_forget(const char *scope);

/* fencing.scopes is being written: every backend drops its cache at commit. */
extern void mark_cache_invalidate_all(void);

#endif							/* MARK_CACHE_H */
