/*-------------------------------------------------------------------------
 *
 * shared_marks.h
 *	  The marks every backend of a server has read, in shared memory, when
 *	  the library is preloaded: a scope another backend has seen is not
 *	  read from fencing.scopes again.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARED_MARKS_H
#define SHARED_MARKS_H

#include "fencing.h"

#include "marks/scope_lock.h"
#include "state/extension_state.h"

/* In _PG_init, before the "fencing." prefix is reserved. */
extern void shared_marks_init(void);

/*
 * The same rules as the backend's own cache (mark_cache.c): a caller holds
 * the scope lock and has accepted the invalidation messages before a get;
 * a fill says when its read started (shared_marks_stamp, taken before the
 * read's snapshot), and is dropped if the scope was forgotten since.
 * "hash" is the scope's pseudo-OID (scope_inval_id).
 */
extern bool shared_marks_get(uint32 hash, const char *scope, int64 *mark, ScopeKey *key);
extern uint64 shared_marks_stamp(uint32 hash);
extern void shared_marks_put(uint32 hash, const char *scope, int64 mark,
							 const ScopeKey *key, uint64 stamp);

/*
 * This database's fencing.scopes as the catalog says it is now, before any
 * get or put: an entry read from another registry (dropped and created
 * again, updated, truncated) is no entry.
 */
extern void shared_marks_registry_seen(const FencingRegistry *registry);

/*
 * A relcache message this backend accepted (InvalidOid: a reset): what it
 * concerns is forgotten, a scope or the whole registry.
 */
extern void shared_marks_message(Oid relid);

/* A scope, or every scope, is forgotten now. */
extern void shared_marks_forget(uint32 hash);

/*
 * Writers at the mark without the scope lock: register (with the mark and
 * key read, false when the scope has no entry or the set no free slot),
 * unregister (a hold given back before the transaction ends), and the
 * raise's drain (forgets the scope and waits for its registered writers).
 */
extern bool shared_marks_register(uint32 hash, const char *scope, int64 *mark, ScopeKey *key);
extern void shared_marks_unregister(uint32 hash, int64 scope_id);
extern void shared_marks_drain(uint32 hash, int64 scope_id);
extern void shared_marks_forget_all(void);

#endif							/* SHARED_MARKS_H */
