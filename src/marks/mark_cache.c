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
#include "checks/input_checks.h"
#include "marks/mark_cache.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"

#include "state/extension_state.h"

typedef struct CachedMark
{
	Oid			inval_id;		/* hash key: the scope's pseudo-OID */
	char		scope[FENCING_SCOPE_MAX_LEN + 1];
	int64		mark;
	ScopeKey	key;			/* what the scope is locked by */
} CachedMark;

static HTAB *marks = NULL;

/* A cache this large is dropped rather than grown. */
#define MARK_CACHE_MAX	10000

/*
 * A transaction that changes more scopes than this sends one message for
 * the whole table instead of one per scope (bounded sinval traffic).
 */
#define MARK_INVAL_MAX	64

/* Scopes this transaction sent a message for; -1 once it sent the table's. */
static int	inval_sent = 0;

/*
 * Bumped by every message that may concern the scope being read; a read
 * that saw it move caches nothing.
 */
static uint64 inval_counter = 0;
static Oid	reading_id = InvalidOid;

Oid
mark_cache_inval_id(const char *scope)
{
	uint32		h = hash_bytes((const unsigned char *) scope, (int) strlen(scope));

	return (Oid) (FirstNormalObjectId + h % ((uint32) PG_UINT32_MAX - FirstNormalObjectId));
}

void
scope_table_drop(HTAB **table)
{
	if (*table != NULL)
	{
		hash_destroy(*table);
		*table = NULL;
	}
}

void *
scope_table_enter(HTAB **table, const char *name, Size entrysize,
				  MemoryContext cxt, long max, Oid key)
{
	if (*table != NULL && hash_get_num_entries(*table) >= max)
		scope_table_drop(table);
	if (*table == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = entrysize;
		ctl.hcxt = cxt;
		*table = hash_create(name, 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	return hash_search(*table, &key, HASH_ENTER, NULL);
}

static void
drop_marks(void)
{
	scope_table_drop(&marks);
}

static void
mark_cache_relcache_callback(Datum arg, Oid relid)
{
	Oid			table = fencing_scopes_relid_if_known();

	/* also when the table is not known (yet, or any more): always safe */
	if (relid == InvalidOid || relid == table || !OidIsValid(table))
	{
		inval_counter++;
		drop_marks();
		return;
	}
	if (relid == reading_id)
		inval_counter++;
	if (marks != NULL)
		(void) hash_search(marks, &relid, HASH_REMOVE, NULL);
}

static void
mark_cache_xact_callback(XactEvent event, void *arg)
{
	if (!fencing_xact_ended(event))
		return;
	inval_sent = 0;
	reading_id = InvalidOid;
}

void
mark_cache_init(void)
{
	CacheRegisterRelcacheCallback(mark_cache_relcache_callback, (Datum) 0);
	RegisterXactCallback(mark_cache_xact_callback, NULL);
}

void
mark_cache_sync(void)
{
	AcceptInvalidationMessages();
}

bool
mark_cache_get(Oid id, const char *scope, int64 *mark, ScopeKey *key)
{
	CachedMark *entry;

	if (marks == NULL)
		return false;
	entry = hash_search(marks, &id, HASH_FIND, NULL);
	if (entry == NULL || strcmp(entry->scope, scope) != 0)
		return false;
	*mark = entry->mark;
	*key = entry->key;
	return true;
}

uint64
mark_cache_read_start(Oid id)
{
	reading_id = id;
	return inval_counter;
}

void
mark_cache_put(Oid id, const char *scope, int64 mark, const ScopeKey *key,
			   uint64 read_start)
{
	CachedMark *entry;

	reading_id = InvalidOid;
	/* a message for this scope arrived while it was read: not cached */
	if (inval_counter != read_start)
		return;
	entry = scope_table_enter(&marks, "fencing cached marks", sizeof(CachedMark),
							  CacheMemoryContext, MARK_CACHE_MAX, id);
	strlcpy(entry->scope, scope, sizeof(entry->scope));
	entry->mark = mark;
	entry->key = *key;
}

void
mark_cache_forget(const char *scope)
{
	if (marks != NULL)
	{
		Oid			id = mark_cache_inval_id(scope);

		(void) hash_search(marks, &id, HASH_REMOVE, NULL);
	}
}

/* Register a relcache invalidation of "relid", which need not be a relation. */
static void
invalidate_relid(Oid relid)
{
	/* a pg_class tuple as CacheInvalidateRelcacheByTuple reads it: oid, relisshared */
	union
	{
		HeapTupleHeaderData hdr;
		char		data[MAXALIGN(SizeofHeapTupleHeader) + sizeof(FormData_pg_class)];
	}			buf;
	HeapTupleData tuple;
	Form_pg_class classform;

	memset(&buf, 0, sizeof(buf));
	buf.hdr.t_hoff = MAXALIGN(SizeofHeapTupleHeader);
	tuple.t_data = &buf.hdr;
	tuple.t_len = sizeof(buf);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = RelationRelationId;
	classform = (Form_pg_class) GETSTRUCT(&tuple);
	classform->oid = relid;
	classform->relisshared = false;
	CacheInvalidateRelcacheByTuple(&tuple);
}

void
mark_cache_invalidate_scope(const char *scope)
{
	if (inval_sent >= 0 && inval_sent < MARK_INVAL_MAX)
	{
		invalidate_relid(mark_cache_inval_id(scope));
		inval_sent++;
		return;
	}
	/*
	 * Too many: the whole table, registered again each time (a duplicate is
	 * not added twice), so that it stays registered in whatever
	 * subtransaction survives.
	 */
	inval_sent = -1;
	invalidate_relid(fencing_scopes_relid());
}

void
mark_cache_invalidate_all(void)
{
	invalidate_relid(fencing_scopes_relid());
}
