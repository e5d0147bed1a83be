/*-------------------------------------------------------------------------
 *
 * mark_cache.h
 *	  The marks kept in memory: each backend's own cache of committed scope
 *	  marks, kept exact by Postgres's shared invalidation messages, and the
 *	  marks shared by the server's backends with the writers registered at
 *	  them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MARK_CACHE_H
#define MARK_CACHE_H

#include "fencing.h"

#include "utils/hsearch.h"

#include "base/scope_tables.h"
#include "marks/scope_lock.h"
#include "state/extension_state.h"

/* A relation or scope changed (InvalidOid: all); called by relcache_watch.c. */
extern void mark_cache_relcache_changed(Oid relid);
/* Called by end_of_xact.c, in its order. */
extern void mark_cache_at_xact_end(void);

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

/*
 * The mark and the id of a scope ("id": scope_inval_id(scope), which
 * callers may keep): from memory, else from the registry (then kept); with
 * fill (a read under the scope lock), what may go to the server's marks is
 * returned there, and mark_cache_share() puts it there once the caller
 * confirmed its lock.  With the mark goes what the scope is locked by (id
 * 0: no such scope).  "use_cache" false: neither from nor into memory.
 */
extern int64 mark_cache_read(const char *scope, Oid id, bool use_cache, ScopeKey *key,
							 MarkFill *fill);
extern void mark_cache_share(const char *scope, const MarkFill *fill);
/* The scope's row in the registry, fresh snapshot, nothing kept (*row NULL: none). */
extern int64 mark_cache_read_row(const char *scope, HeapTuple *row, ScopeKey *key);
/* The same for a holder of the scope lock exclusively about to change it: forgotten first. */
extern int64 mark_cache_read_for_change(const char *scope, HeapTuple *row, ScopeKey *key);

/* Moves at every message for the whole registry: remembered keys are void. */
extern uint64 mark_cache_epoch(void);
/* This backend, and the marks shared in memory, forget a scope, or all. */
extern void mark_cache_forget(const char *scope);
extern void mark_cache_forget_all(void);

/*
 * The marks shared by the server's backends (library preloaded).
 */
/* In _PG_init, before the "fencing." prefix is reserved. */
extern void shared_marks_init(void);

/* Whether the server keeps shared marks (preloaded, fencing.shared_marks > 0). */
extern bool shared_marks_on(void);

/* A database was created (relcache_watch.c): forget every shared mark. */
extern void shared_marks_database_created(void);

/*
 * This database's fencing.scopes as the catalog says it is now, before any
 * get or put: an entry read from another registry (dropped and created
 * again, updated, truncated) is no entry.
 */
extern void shared_marks_registry_seen(const FencingRegistry *registry);

/*
 * Writers at the mark without the scope lock: register (with the mark and
 * key read, false when the scope has no entry or the set no free slot),
 * unregister (a hold given back before the transaction ends), and the
 * raise's drain (forgets the scope and waits for its registered writers).
 */
extern bool shared_marks_register(uint32 hash, const char *scope, int64 *mark, ScopeKey *key);
extern void shared_marks_unregister(uint32 hash, int64 scope_id);
extern void shared_marks_drain(uint32 hash, int64 scope_id);

#endif							/* MARK_CACHE_H */
