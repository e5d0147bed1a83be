/*-------------------------------------------------------------------------
 *
 * mark_cache.c
 *	  Shared-memory cache of scope marks, used when fencing is listed in
 *	  shared_preload_libraries; without it every first write of a scope in a
 *	  transaction reads fencing.scopes, which is correct but slower.
 *
 * The cache leans on the scope lock of scope_mark.c: an entry is read or
 * filled only by a backend holding the scope's lock (share or exclusive), and
 * a backend about to change a mark holds it exclusively and removes the entry
 * first.  So while anyone can read an entry, no mark change of that scope is
 * in flight, and the entry equals the committed mark: a raise that commits
 * or aborts leaves no entry, and the next reader fills it from the table.
 * Entries are keyed by database and by the OID of fencing.scopes, so a
 * dropped and re-created extension, or a restored copy, never sees old ones.
 * A statement trigger on fencing.scopes drops the database's entries if the
 * table is written by anything else (see the SQL script).
 *
 *-------------------------------------------------------------------------
 */
#include "marks/mark_cache.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/hsearch.h"

#include "state/extension_state.h"

typedef struct MarkCacheKey
{
	Oid			dboid;
	Oid			scopes_relid;
	char		scope[FENCING_SCOPE_MAX_LEN + 1];
} MarkCacheKey;

typedef struct MarkCacheEntry
{
	MarkCacheKey key;
	int64		mark;
} MarkCacheEntry;

/* fencing.mark_cache_size: entries; 0 turns the cache off */
static int	mark_cache_size = 10000;

static LWLock *cache_lock = NULL;
static HTAB *cache = NULL;

#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
mark_cache_shmem_request(void)
{
#if PG_VERSION_NUM >= 150000
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
#endif
	RequestAddinShmemSpace(hash_estimate_size(mark_cache_size, sizeof(MarkCacheEntry)));
	RequestNamedLWLockTranche("fencing_mark_cache", 1);
}

static void
mark_cache_shmem_startup(void)
{
	HASHCTL		ctl;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	cache_lock = &(GetNamedLWLockTranche("fencing_mark_cache"))->lock;
	ctl.keysize = sizeof(MarkCacheKey);
	ctl.entrysize = sizeof(MarkCacheEntry);
	cache = ShmemInitHash("fencing mark cache", mark_cache_size, mark_cache_size,
						  &ctl, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

void
mark_cache_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("fencing.mark_cache_size",
							"Number of scope marks kept in shared memory.",
							"Only with fencing in shared_preload_libraries. 0 turns the cache off.",
							&mark_cache_size,
							10000, 0, 10000000,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	if (mark_cache_size == 0)
		return;

#if PG_VERSION_NUM >= 150000
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = mark_cache_shmem_request;
#else
	mark_cache_shmem_request();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = mark_cache_shmem_startup;
}

static void
make_key(MarkCacheKey *key, const char *scope)
{
	memset(key, 0, sizeof(*key));
	key->dboid = MyDatabaseId;
	key->scopes_relid = fencing_scopes_relid();
	strlcpy(key->scope, scope, sizeof(key->scope));
}

bool
mark_cache_get(const char *scope, int64 *mark)
{
	MarkCacheKey key;
	MarkCacheEntry *entry;

	if (cache == NULL)
		return false;
	make_key(&key, scope);
	LWLockAcquire(cache_lock, LW_SHARED);
	entry = hash_search(cache, &key, HASH_FIND, NULL);
	if (entry != NULL)
		*mark = entry->mark;
	LWLockRelease(cache_lock);
	return entry != NULL;
}

void
mark_cache_put(const char *scope, int64 mark)
{
	MarkCacheKey key;
	MarkCacheEntry *entry;

	if (cache == NULL)
		return;
	make_key(&key, scope);
	LWLockAcquire(cache_lock, LW_EXCLUSIVE);
	/* a full cache is not an error: the next reader reads the table */
	entry = hash_search(cache, &key, HASH_ENTER_NULL, NULL);
	if (entry != NULL)
		entry->mark = mark;
	LWLockRelease(cache_lock);
}

void
mark_cache_forget(const char *scope)
{
	MarkCacheKey key;

	if (cache == NULL)
		return;
	make_key(&key, scope);
	LWLockAcquire(cache_lock, LW_EXCLUSIVE);
	(void) hash_search(cache, &key, HASH_REMOVE, NULL);
	LWLockRelease(cache_lock);
}

void
mark_cache_forget_database(void)
{
	HASH_SEQ_STATUS status;
	MarkCacheEntry *entry;

	if (cache == NULL)
		return;
	LWLockAcquire(cache_lock, LW_EXCLUSIVE);
	hash_seq_init(&status, cache);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (entry->key.dboid == MyDatabaseId)
			(void) hash_search(cache, &entry->key, HASH_REMOVE, NULL);
	}
	LWLockRelease(cache_lock);
}
