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
 *   - every transaction that writes fencing.scopes (the extension's own
 *     raises, a reset, or anything else: a statement trigger on the table
 *     catches all of them) registers a relcache invalidation of the table,
 *     which Postgres broadcasts when it commits, before it releases locks;
 *   - a backend reads the cache only while holding the scope lock, and after
 *     taking it processes pending invalidations (mark_cache_sync), so a change
 *     committed by the previous holder of the lock is always seen;
 *   - a transaction that changed a mark caches nothing until it ends (it
 *     would see its own uncommitted mark), and an aborted one sent nothing.
 *
 * A relcache reset (queue overflow) drops everything, which is always safe.
 *
 *-------------------------------------------------------------------------
 */
#include "checks/input_checks.h"
#include "marks/mark_cache.h"

#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"

#include "state/extension_state.h"

typedef struct CachedMark
{
	char		scope[FENCING_SCOPE_MAX_LEN + 1];	/* hash key */
	int64		mark;
} CachedMark;

static HTAB *marks = NULL;

/* A cache this large is dropped rather than grown. */
#define MARK_CACHE_MAX	10000

static void
drop_marks(void)
{
	if (marks != NULL)
	{
		hash_destroy(marks);
		marks = NULL;
	}
}

static void
mark_cache_relcache_callback(Datum arg, Oid relid)
{
	if (marks == NULL)
		return;
	/* also when the table is not known (yet, or any more): always safe */
	if (relid == InvalidOid || relid == fencing_scopes_relid_if_known() ||
		!OidIsValid(fencing_scopes_relid_if_known()))
		drop_marks();
}

void
mark_cache_init(void)
{
	CacheRegisterRelcacheCallback(mark_cache_relcache_callback, (Datum) 0);
}

void
mark_cache_sync(void)
{
	AcceptInvalidationMessages();
}

bool
mark_cache_get(const char *scope, int64 *mark)
{
	CachedMark *entry;

	if (marks == NULL)
		return false;
	entry = hash_search(marks, scope, HASH_FIND, NULL);
	if (entry == NULL)
		return false;
	*mark = entry->mark;
	return true;
}

void
mark_cache_put(const char *scope, int64 mark)
{
	CachedMark *entry;

	if (marks != NULL && hash_get_num_entries(marks) >= MARK_CACHE_MAX)
		drop_marks();
	if (marks == NULL)
		marks = fencing_scope_hash_create("fencing cached marks", sizeof(CachedMark),
											   CacheMemoryContext);
	entry = hash_search(marks, scope, HASH_ENTER, NULL);
	entry->mark = mark;
}

void
mark_cache_forget(const char *scope)
{
	if (marks != NULL)
		(void) hash_search(marks, scope, HASH_REMOVE, NULL);
}

void
mark_cache_invalidate_all(void)
{
	CacheInvalidateRelcacheByRelid(fencing_scopes_relid());
}
