/*-------------------------------------------------------------------------
 *
 * mark_cache.h
 *	  Shared-memory cache of scope marks, when the library is preloaded.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MARK_CACHE_H
#define MARK_CACHE_H

#include "fencing.h"

extern void mark_cache_init(void);

/* All three require the caller to hold the scope lock (see scope_mark.c). */
extern bool mark_cache_get(const char *scope, int64 *mark);
extern void mark_cache_put(const char *scope, int64 mark);
extern void mark_cache_forget(const char *scope);

/* Drop every entry of this database (fencing.scopes changed behind us). */
extern void mark_cache_forget_database(void);

#endif							/* MARK_CACHE_H */
