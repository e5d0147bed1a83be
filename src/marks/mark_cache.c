/*-------------------------------------------------------------------------
 *
 * mark_cache.c
 *	  Backend-local cache of committed scope marks.
 *
 * Reading fencing.scopes on the first write of a scope in every transaction
 * costs more than the rest of the fence.  Marks rarely change (once per term),
 * so each backend keeps the marks it has read, and Postgres's own shared
 * invalidation messages tell it when to forget them:
 *
 *   - every transaction that writes a row of fencing.scopes (the extension's
 *     own raises, a reset, a superuser's UPDATE, logical replication apply:
 *     a row trigger that fires ALWAYS catches all of them) registers an
 *     invalidation for that scope, which Postgres broadcasts when it
 *     commits, before it releases locks;
 *   - a backend reads the cache only while holding the scope lock, and after
 *     taking it processes pending invalidations (mark_cache_sync), so a change
 *     committed by the previous holder of the lock is always seen;
 *   - a transaction that changed a mark caches nothing until it ends (it
 *     would see its own uncommitted mark), and an aborted one sent nothing;
 *   - a read that consumed an invalidation for its scope while it ran (its
 *     snapshot may predate the change: opening the index accepts messages)
 *     caches nothing, as catcache does with its invalidation counter.
 *
 * Per-scope invalidation.  Shared invalidation has no message type for an
 * extension's own keys.  A relcache message carries a relation OID and
 * reaches every relcache callback; Postgres itself only looks the OID up in
 * its relcache (a miss: nothing to do) and in cached plans' dependency
 * lists.  So the invalidation of scope s is a relcache message for a
 * pseudo-OID derived from the hash of s, above FirstNormalObjectId (never a
 * catalog, so the relcache init file is never touched).  If the pseudo-OID
 * happens to be a real relation's, that relation's relcache entry is
 * rebuilt once: harmless.  The cache is keyed by the pseudo-OID; two scopes
 * with the same one evict each other.  A message for fencing.scopes itself
 * (TRUNCATE, or a transaction that changed more than MARK_INVAL_MAX scopes)
 * or a relcache reset (queue overflow) drops everything, which is always
 * safe.  1.1 flushed every backend's whole cache, and every plan that reads
 * fencing.scopes, at each raise of any scope.
 *
 *-------------------------------------------------------------------------
 */
#include "base/input_checks.h"
#include "marks/mark_cache.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"

#include "marks/shared_marks.h"
#include "state/extension_state.h"

typedef struct CachedMark
{
	Oid			inval_id;		/* hash key: the scope's pseudo-OID */
	char		scope[FENCING_SCOPE_MAX_LEN + 1];
	int64		mark;
	ScopeKey	key;			/* what the scope is locked by */
	bool		share_pending;	/* read without the lock: shared once under it */
	uint64		share_stamp;	/* the shared cache's stamp of that read */
} CachedMark;

static HTAB *marks = NULL;

/* A cache this large is dropped rather than grown. */
#define MARK_CACHE_MAX	10000

/*
 * Bumped by every message that may concern the scope being read; a read
 * that saw it move caches nothing.
 */
static uint64 inval_counter = 0;
static Oid	reading_id = InvalidOid;

/*
 * Bumped by every message for the whole registry (its DDL: ALTER EXTENSION
 * UPDATE, DROP/CREATE EXTENSION, TRUNCATE; a reset of the message queue):
 * what a backend remembers of a scope across transactions (scope_mark.c's
 * lock keys) is forgotten when it moved.
 */
static uint64 registry_epoch = 1;

uint64
mark_cache_epoch(void)
{
	return registry_epoch;
}

static void
drop_marks(void)
{
	scope_table_drop(&marks);
}

void
mark_cache_relcache_changed(Oid relid)
{
	Oid			table = fencing_scopes_relid_if_known();

	shared_marks_message(relid);

	/* also when the table is not known (yet, or any more): always safe */
	if (relid == InvalidOid || relid == table || !OidIsValid(table))
	{
		inval_counter++;
		registry_epoch++;
		drop_marks();
		return;
	}
	if (relid == reading_id)
		inval_counter++;
	if (marks != NULL)
		(void) hash_search(marks, &relid, HASH_REMOVE, NULL);
}

void
mark_cache_at_xact_end(void)
{
	reading_id = InvalidOid;
}

void
mark_cache_sync(void)
{
	FencingRegistry registry;

	/* first, so that every message taken in is told apart (shared_marks.c) */
	(void) fencing_scopes_relid();
	fencing_registry_now(&registry);
	shared_marks_registry_seen(&registry);
	AcceptInvalidationMessages();
	/* and again: a message for the registry (its DDL) may have moved it */
	fencing_registry_now(&registry);
	shared_marks_registry_seen(&registry);
}

static CachedMark *
put_local(Oid id, const char *scope, int64 mark, const ScopeKey *key)
{
	CachedMark *entry;

	entry = scope_table_enter(&marks, "fencing cached marks", sizeof(CachedMark),
							  CacheMemoryContext, MARK_CACHE_MAX, id);
	strlcpy(entry->scope, scope, sizeof(entry->scope));
	entry->mark = mark;
	entry->key = *key;
	entry->share_pending = false;
	return entry;
}

bool
mark_cache_get(Oid id, const char *scope, int64 *mark, ScopeKey *key, MarkFill *fill)
{
	CachedMark *entry = NULL;

	if (marks != NULL)
		entry = hash_search(marks, &id, HASH_FIND, NULL);
	if (entry != NULL && strcmp(entry->scope, scope) == 0)
	{
		*mark = entry->mark;
		*key = entry->key;
		if (fill != NULL && entry->share_pending)
		{
			/* still exact under the lock, if it is the scope's: any change since forgot it */
			fill->pending = true;
			fill->id = id;
			fill->mark = entry->mark;
			fill->key = entry->key;
			fill->stamp = entry->share_stamp;
		}
		return true;
	}
	/* what another backend read, exact by the same messages */
	if (!shared_marks_get(id, scope, mark, key))
		return false;
	put_local(id, scope, *mark, key);
	return true;
}

void
mark_cache_read_start(Oid id, MarkReadStart *start)
{
	reading_id = id;
	start->local = inval_counter;
	start->shared = shared_marks_stamp(id);
}

void
mark_cache_put(Oid id, const char *scope, int64 mark, const ScopeKey *key,
			   const MarkReadStart *start, MarkShare share, MarkFill *fill)
{
	CachedMark *entry = NULL;

	reading_id = InvalidOid;
	/* a message for this scope arrived while it was read: not cached */
	if (inval_counter == start->local)
		entry = put_local(id, scope, mark, key);
	/* a missing scope is never shared: its creation sends no forget */
	if (key->id == 0 || share == MARK_PRIVATE)
		return;
	if (share == MARK_SHARE_NOW)
	{
		/* the caller fills it once the lock is known to be the scope's */
		fill->pending = true;
		fill->id = id;
		fill->mark = mark;
		fill->key = *key;
		fill->stamp = start->shared;
	}
	else if (entry != NULL)
	{
		entry->share_pending = true;
		entry->share_stamp = start->shared;
	}
}

void
mark_cache_share(const char *scope, const MarkFill *fill)
{
	CachedMark *entry = NULL;

	shared_marks_put(fill->id, scope, fill->mark, &fill->key, fill->stamp);
	if (marks != NULL)
		entry = hash_search(marks, &fill->id, HASH_FIND, NULL);
	if (entry != NULL)
		entry->share_pending = false;
}

void
mark_cache_forget(const char *scope)
{
	Oid			id = scope_inval_id(scope);

	if (marks != NULL)
		(void) hash_search(marks, &id, HASH_REMOVE, NULL);
	shared_marks_forget(id);
}

void
mark_cache_forget_all(void)
{
	drop_marks();
	shared_marks_forget_all();
}

