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
/*
 * A fill of the marks shared with other backends that a read under a lock
 * would make: the caller makes it (mark_cache_share) only once it has
 * confirmed that the lock it holds is the scope's current lock, the one
 * "key" names (scope_mark.c); a fill made under a lock taken by a key
 * remembered from before a change of owner or of the registry would let
 * writers at an old mark register while a raise is under way.
 */
typedef struct MarkFill
{
	bool		pending;		/* false: nothing to fill */
	Oid			id;
	int64		mark;
	ScopeKey	key;			/* what the read found the scope is locked by */
	uint64		stamp;			/* shared_marks_stamp() before the read */
} MarkFill;

/* with fill (a read under the lock), what may be shared is returned there */
extern bool mark_cache_get(Oid id, const char *scope, int64 *mark, ScopeKey *key,
						   MarkFill *fill);
extern void mark_cache_share(const char *scope, const MarkFill *fill);

/* Moves at every message for the whole registry: remembered keys are void. */
extern uint64 mark_cache_epoch(void);
typedef struct MarkReadStart
{
	uint64		local;			/* this backend's count of messages */
	uint64		shared;			/* the shared cache's stamp */
} MarkReadStart;

extern void mark_cache_read_start(Oid id, MarkReadStart *start);
/*
 * Whether a read may go to the marks shared with other backends: never
 * (not the scope's latest row version), now (read under the scope lock:
 * returned in a MarkFill, filled once the lock is confirmed), or once this
 * backend finds it again under a confirmed lock (read to learn the id).
 */
typedef enum MarkShare
{
	MARK_PRIVATE,
	MARK_SHARE_NOW,
	MARK_SHARE_WHEN_LOCKED
} MarkShare;

extern void mark_cache_put(Oid id, const char *scope, int64 mark, const ScopeKey *key,
						   const MarkReadStart *start, MarkShare share, MarkFill *fill);
/* This backend, and the marks shared in memory, forget a scope, or all. */
extern void mark_cache_forget(const char *scope);
extern void mark_cache_forget_all(void);

#endif							/* MARK_CACHE_H */
