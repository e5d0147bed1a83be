/*-------------------------------------------------------------------------
 *
 * mark_cache.c
 *	  The marks kept in memory, so that a write seldom reads fencing.scopes:
 *	  each backend's own (always), and the server's, shared by its backends,
 *	  with the writers registered at them (library preloaded).  A cache
 *	  makes a check faster and never changes its verdict: every rule that
 *	  keeps the two exact is in this file, and so is the read of a mark from
 *	  the registry that fills them (scope_mark.c decides what to read when,
 *	  under which lock).
 *
 * THE BACKEND'S OWN MARKS
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
 *
 * THE MARKS SHARED BY THE SERVER'S BACKENDS
 *
 * A cache of committed scope marks in shared memory, filled by whichever
 * backend reads a mark first, so that a scope one backend has read costs
 * the others a look-up, not a read of fencing.scopes.  Only when the
 * library is preloaded (fencing.shared_marks entries, 0 turns it off).
 *
 * An entry outlives the backend that filled it, and a backend started after
 * a change never receives the change's invalidation message; so, unlike a
 * backend's own cache, this one cannot rely on messages alone.  It is kept
 * exact by these rules (this file and scope_mark.c apply them):
 *	 - every change of a scope's row forgets the scope here after the row
 *	   changed: a raise through the extension holds the scope lock
 *	   exclusively from before it forgets until after it commits; any other
 *	   write (SQL by a superuser, logical replication apply) fires the
 *	   trigger forget_cached_marks after the row changed;
 *	 - a mark is filled only by a backend that holds the scope lock (which
 *	   no raise in flight lets it have), confirmed to be the scope's current
 *	   lock: the id and owner read under it are the ones it was taken by
 *	   (a lock taken by a key remembered from before an owner's change, an
 *	   update of the extension or a registry created again conflicts with
 *	   nothing a raise holds: scope_mark.c fills only after the check), and
 *	   only from the scope's latest row version, which no transaction has
 *	   updated or deleted (a write in flight, also of a prepared
 *	   transaction, leaves the row's xmax set);
 *	 - an entry carries the registry it was read from as the catalog says
 *	   it is (OID, storage, SQL version) and counts only for a backend that
 *	   finds the same: a backend started after DROP/CREATE EXTENSION, an
 *	   update or a TRUNCATE, which received no message, finds none; the
 *	   creation of a database forgets every entry (a database dropped and
 *	   created again with the same OID from a template with the extension
 *	   finds the same registry);
 *	 - nothing is read, filled or registered while the server is in
 *	   recovery (replay fires no trigger), and the first use after recovery
 *	   forgets everything (shared_trusted);
 *	 - a fill carries a stamp taken before its read's snapshot (the set's
 *	   count of forgets and the generation), and is dropped if the stamp is
 *	   no longer current: the scope was forgotten while it was read.
 * So a mark filled is the committed one, and stays so until a change that
 * forgets it (the trigger forget_cached_marks must stay enabled: a
 * superuser who disables it and writes fencing.scopes, as a data-only
 * restore with --disable-triggers does, leaves entries behind until a
 * message for the whole registry, such as enabling it again, forgets them); a missing scope is never filled (its creation forgets
 * nothing).  Every backend that accepts an invalidation message also
 * forgets what it concerns here (a scope, or everything for the registry as
 * a whole or a reset of the message queue): not needed for exactness, it
 * keeps entries from outliving a change made while they were in use.
 *
 * The table is set-associative: a scope's set is chosen by the hash of its
 * name and database, and holds SHARED_MARKS_WAYS entries; a full set gives
 * up its entries in turn.  Each set has its own spinlock: what runs under
 * it is a scan of the set's few entries and slots, loads and stores that
 * cannot fail (no allocation, no call that can raise an error), cheaper
 * than a lightweight lock's bookkeeping on every write.  Entries
 * keep the whole name, so two scopes whose hashes collide never share one.
 * Scope names are chosen by tenants: names picked to fall into one set can
 * make the other scopes of that set miss (and read fencing.scopes) more
 * often, and spin briefly on its lock (held for a scan of one set, never
 * for a wait); they never change a verdict.
 * Scopes are per database: the database is part of the key.
 *
 * Writers at the mark, registered.  With the library preloaded a write at a
 * scope's mark takes no heavyweight lock when the mark is here: under the
 * set's lock it reads the mark and registers its transaction (its virtual
 * transaction id) in one of the set's SHARED_MARKS_WRITERS slots, with the
 * scope's id (as its lock is keyed: a name chosen to collide with another
 * tenant's scope's hash makes no raise of that scope wait), which it
 * keeps until its transaction ends (no one clears it then: a slot whose
 * transaction is over is free, told by the PGPROC's current local
 * transaction id).  Every raise drains the scope after it holds the
 * scope's lock exclusively (scope_mark.c): under the set's lock it forgets
 * the scope's entry and notes the registered writers of the scope still in
 * flight, then waits for each of them to end (VirtualXactLock(): a lock
 * wait, so lock_timeout, deadlock detection and pg_blocking_pids() see
 * it).  Nothing can fill the entry again while the raise holds the scope's
 * lock (see above), and a writer registers only with an entry: so every
 * writer at the old mark either registered before the drain, and is waited
 * for, or finds no entry and takes the scope lock in share mode, which
 * waits for the raise.  A set whose slots are all in use, like a missing
 * entry, sends the writer to the scope lock.  A registration outlives its
 * transaction only as a free slot; a prepared transaction takes the scope
 * lock before it prepares (its virtual transaction id ends then).
 *
 *-------------------------------------------------------------------------
 */
#include "base/input_checks.h"
#include "marks/mark_cache.h"
#include "marks/scope_mark.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "port/pg_bitutils.h"
#include "storage/ipc.h"
#include "storage/lock.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"

#include "state/direct_row.h"
#include "state/extension_state.h"

static void shared_marks_forget(uint32 hash);
static void shared_marks_forget_all(void);

#define SHARED_MARKS_NAME	"fencing shared marks"
#define SHARED_MARKS_WAYS	8

typedef struct SharedMark
{
	uint32		hash;			/* the scope's pseudo-OID */
	uint32		generation;		/* valid while the table's is the same */
	Oid			dbid;
	FencingRegistry registry;	/* the fencing.scopes it was read from */
	bool		valid;
	int64		mark;
	ScopeKey	key;
	char		scope[FENCING_SCOPE_MAX_LEN + 1];
} SharedMark;

/* A transaction writing at a scope's mark without the scope's lock. */
typedef struct MarkWriter
{
	int64		scope_id;		/* the scope's id, as its lock is keyed */
	Oid			dbid;			/* InvalidOid: the slot is free */
	int			procno;			/* the writer's PGPROC (GetPGProcByNumber) */
	VirtualTransactionId vxid;	/* registered until this transaction ends */
} MarkWriter;

#define SHARED_MARKS_WRITERS	16

typedef struct SharedMarkSet
{
	slock_t		mutex;			/* guards everything below but hits */
	uint32		forgets;		/* bumped by every forget of a scope of the set */
	uint32		next_victim;
	pg_atomic_uint64 hits;		/* for fencing.shared_marks_info() */
	uint64		fills;
	SharedMark	ways[SHARED_MARKS_WAYS];
	MarkWriter	writers[SHARED_MARKS_WRITERS];
} SharedMarkSet;

/* Each database's fencing.scopes, as its backends last found it. */
#define SHARED_MARKS_DATABASES	64

typedef struct RegistryOf
{
	Oid			dbid;
	Oid			registry;
} RegistryOf;

typedef struct SharedMarks
{
	pg_atomic_uint32 generation;	/* bumped to forget every entry */
	pg_atomic_uint32 recovery_seen; /* a backend found the server in recovery */
	uint32		nsets;			/* a power of two */
	slock_t		registries_mutex;
	RegistryOf	registries[SHARED_MARKS_DATABASES];
	SharedMarkSet sets[FLEXIBLE_ARRAY_MEMBER];
} SharedMarks;

static int	shared_marks_max = 16384;
static SharedMarks *shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static uint32
set_count(void)
{
	uint32		wanted = (uint32) (shared_marks_max + SHARED_MARKS_WAYS - 1) / SHARED_MARKS_WAYS;

	return wanted <= 1 ? 1 : pg_nextpower2_32(wanted);
}

static Size
shared_marks_size(void)
{
	return add_size(offsetof(SharedMarks, sets),
					mul_size(set_count(), sizeof(SharedMarkSet)));
}

static void
shared_marks_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shared_marks_size());
}

static void
shared_marks_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct(SHARED_MARKS_NAME, shared_marks_size(), &found);
	if (!found)
	{
		memset(shared, 0, shared_marks_size());
		pg_atomic_init_u32(&shared->generation, 1);
		pg_atomic_init_u32(&shared->recovery_seen, 0);
		for (uint32 i = 0; i < set_count(); i++)
		{
			SpinLockInit(&shared->sets[i].mutex);
			pg_atomic_init_u64(&shared->sets[i].hits, 0);
		}
		SpinLockInit(&shared->registries_mutex);
		shared->nsets = set_count();
	}
	LWLockRelease(AddinShmemInitLock);
}

void
shared_marks_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("fencing.shared_marks",
							"Number of scope marks kept in shared memory for every backend (0: none).",
							"Each takes about 300 bytes; a scope not kept there is read from fencing.scopes by each backend that writes it first, and its writers lock it.",
							&shared_marks_max,
							16384, 0, 64 * 1024 * 1024,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	if (shared_marks_max == 0)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shared_marks_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shared_marks_shmem_startup;
}

/* The set of a scope of this database. */
static SharedMarkSet *
set_of(uint32 hash)
{
	return &shared->sets[hash_combine(hash, MyDatabaseId) & (shared->nsets - 1)];
}

/* The scope's set, its spinlock taken; NULL without shared memory. */
static SharedMarkSet *
lock_set(uint32 hash)
{
	SharedMarkSet *set;

	if (shared == NULL)
		return NULL;
	set = set_of(hash);
	SpinLockAcquire(&set->mutex);
	return set;
}

/*
 * This backend's registry, as the catalog says it is now: known before any
 * get or put (shared_marks_registry_seen).
 */
static FencingRegistry my_registry = {InvalidOid, InvalidOid, 0};

static bool
same_registry(const FencingRegistry *a, const FencingRegistry *b)
{
	return a->relid == b->relid && a->relfilenode == b->relfilenode &&
		a->version == b->version;
}

static bool
is_entry(const SharedMark *m, uint32 hash, const char *scope)
{
	return m->hash == hash && m->dbid == MyDatabaseId &&
		same_registry(&m->registry, &my_registry) && strcmp(m->scope, scope) == 0;
}

/*
 * Whether the shared marks may be read or filled now: never while the
 * server is in recovery (replay fires no trigger and takes no lock of ours,
 * so nothing read there stays exact), and once recovery has ended, only
 * after every entry of before has been forgotten (the first backend to see
 * the end does it; none can have been filled in recovery, this is the
 * second fence).  RecoveryInProgress() costs a test of a local flag once
 * this backend has seen recovery end.
 */
static bool
shared_trusted(void)
{
	if (unlikely(RecoveryInProgress()))
	{
		if (pg_atomic_read_u32(&shared->recovery_seen) == 0)
			pg_atomic_write_u32(&shared->recovery_seen, 1);
		return false;
	}
	if (unlikely(pg_atomic_read_u32(&shared->recovery_seen) != 0))
	{
		uint32		seen = 1;

		if (pg_atomic_compare_exchange_u32(&shared->recovery_seen, &seen, 0))
			pg_atomic_fetch_add_u32(&shared->generation, 1);
	}
	return true;
}

/*
 * A database was created, possibly with the OID of one dropped before
 * (CREATE DATABASE ... OID, or the OID counter come round) and from a
 * template with the extension: same registry OID, storage and version, and
 * no message reaches its backends.  The entries of the dropped one are
 * forgotten, every database's with them (rare, and always safe); none of
 * the new database can be filled before its creation commits.
 */
void
shared_marks_database_created(void)
{
	shared_marks_forget_all();
}

bool
shared_marks_on(void)
{
	return shared != NULL;
}

void
shared_marks_registry_seen(const FencingRegistry *registry)
{
	int			free_slot = -1;

	if (shared == NULL || same_registry(registry, &my_registry))
		return;
	my_registry = *registry;
	SpinLockAcquire(&shared->registries_mutex);
	for (int i = 0; i < SHARED_MARKS_DATABASES; i++)
	{
		if (shared->registries[i].dbid == MyDatabaseId)
		{
			free_slot = i;
			break;
		}
		if (free_slot < 0 && !OidIsValid(shared->registries[i].dbid))
			free_slot = i;
	}
	if (free_slot >= 0)
	{
		shared->registries[free_slot].dbid = MyDatabaseId;
		shared->registries[free_slot].registry = registry->relid;
	}
	SpinLockRelease(&shared->registries_mutex);
}

/*
 * Whether a relcache message for relid concerns the whole registry of this
 * database: a backend that has not looked fencing.scopes up itself asks what
 * the others found.  When no backend of the database has (no entry of it
 * can exist), no; when too many databases use the extension to remember
 * theirs, every message might.
 */
static bool
is_registry(Oid relid)
{
	bool		known = false;
	bool		is = false;

	if (OidIsValid(my_registry.relid))
		return relid == my_registry.relid;
	SpinLockAcquire(&shared->registries_mutex);
	for (int i = 0; i < SHARED_MARKS_DATABASES; i++)
	{
		if (shared->registries[i].dbid == MyDatabaseId)
		{
			known = true;
			is = shared->registries[i].registry == relid;
			break;
		}
	}
	if (!known && OidIsValid(shared->registries[SHARED_MARKS_DATABASES - 1].dbid))
		is = true;				/* full: it may have been left out */
	SpinLockRelease(&shared->registries_mutex);
	return is;
}

/* The scope's valid entry in its set (the set's lock held), or NULL. */
static SharedMark *
entry_in(SharedMarkSet *set, uint32 hash, const char *scope)
{
	for (int w = 0; w < SHARED_MARKS_WAYS; w++)
	{
		SharedMark *m = &set->ways[w];

		if (m->valid && is_entry(m, hash, scope) &&
			m->generation == pg_atomic_read_u32(&shared->generation))
			return m;
	}
	return NULL;
}

/*
 * Whether a registered writer's transaction may still be running: its
 * PGPROC runs the same local transaction (ids only grow, so another id
 * says it ended; a stale read of the id errs towards "running").
 */
static bool
writer_running(const MarkWriter *w)
{
	return OidIsValid(w->dbid) &&
		FENCING_PROC_LXID(GetPGProcByNumber(w->procno)) == w->vxid.localTransactionId;
}

/* A slot for this transaction's registration (the set's lock held), or NULL. */
static MarkWriter *
writer_slot(SharedMarkSet *set)
{
	MarkWriter *free_slot = NULL;

	for (int i = 0; i < SHARED_MARKS_WRITERS; i++)
	{
		MarkWriter *w = &set->writers[i];

		if (!OidIsValid(w->dbid) ||
			(w->procno == FENCING_MY_PROCNO && w->vxid.localTransactionId != FENCING_MY_LXID))
			return w;			/* free, or this backend's ended transaction's */
	}
	for (int i = 0; i < SHARED_MARKS_WRITERS && free_slot == NULL; i++)
		if (!writer_running(&set->writers[i]))
			free_slot = &set->writers[i];
	return free_slot;
}

/*
 * The scope's mark and key from its entry, and with "writer" this
 * transaction registered as a writer of the scope at that mark: false when
 * the scope has no entry, or (writer) the set no free slot.
 */
static bool
read_entry(uint32 hash, const char *scope, int64 *mark, ScopeKey *key, bool writer)
{
	SharedMarkSet *set;
	SharedMark *m;
	MarkWriter *w = NULL;
	bool		found;

	if (shared == NULL || !OidIsValid(my_registry.relid) || !shared_trusted())
		return false;
	set = lock_set(hash);
	m = entry_in(set, hash, scope);
	if (m != NULL && writer)
		w = writer_slot(set);
	found = m != NULL && (!writer || w != NULL);
	if (w != NULL)
	{
		w->scope_id = m->key.id;
		w->dbid = MyDatabaseId;
		w->procno = FENCING_MY_PROCNO;
		GET_VXID_FROM_PGPROC(w->vxid, *MyProc);
	}
	if (found)
	{
		*mark = m->mark;
		*key = m->key;
		pg_atomic_fetch_add_u64(&set->hits, 1);
	}
	SpinLockRelease(&set->mutex);
	return found;
}

static bool
shared_marks_get(uint32 hash, const char *scope, int64 *mark, ScopeKey *key)
{
	return read_entry(hash, scope, mark, key, false);
}

bool
shared_marks_register(uint32 hash, const char *scope, int64 *mark, ScopeKey *key)
{
	return read_entry(hash, scope, mark, key, true);
}

void
shared_marks_unregister(uint32 hash, int64 scope_id)
{
	SharedMarkSet *set = lock_set(hash);

	if (set == NULL)
		return;
	for (int i = 0; i < SHARED_MARKS_WRITERS; i++)
	{
		MarkWriter *w = &set->writers[i];

		if (w->scope_id == scope_id && w->dbid == MyDatabaseId && w->procno == FENCING_MY_PROCNO &&
			w->vxid.localTransactionId == FENCING_MY_LXID)
			w->dbid = InvalidOid;
	}
	SpinLockRelease(&set->mutex);
}

static uint64
current_stamp(const SharedMarkSet *set)
{
	return ((uint64) pg_atomic_read_u32(&shared->generation) << 32) | set->forgets;
}

static uint64
shared_marks_stamp(uint32 hash)
{
	SharedMarkSet *set;
	uint64		stamp;

	if (shared == NULL)
		return 0;
	set = lock_set(hash);
	stamp = current_stamp(set);
	SpinLockRelease(&set->mutex);
	return stamp;
}

static void
shared_marks_put(uint32 hash, const char *scope, int64 mark, const ScopeKey *key,
				 uint64 stamp)
{
	SharedMarkSet *set;
	SharedMark *slot = NULL;

	if (shared == NULL || !OidIsValid(my_registry.relid) || !shared_trusted())
		return;
	set = lock_set(hash);
	if (current_stamp(set) != stamp)
	{
		/* forgotten while it was read: the value may predate the change */
		SpinLockRelease(&set->mutex);
		return;
	}
	for (int w = 0; w < SHARED_MARKS_WAYS && slot == NULL; w++)
		if (set->ways[w].valid && is_entry(&set->ways[w], hash, scope))
			slot = &set->ways[w];
	for (int w = 0; w < SHARED_MARKS_WAYS && slot == NULL; w++)
		if (!set->ways[w].valid || set->ways[w].generation != (uint32) (stamp >> 32))
			slot = &set->ways[w];
	if (slot == NULL)
		slot = &set->ways[set->next_victim++ % SHARED_MARKS_WAYS];
	slot->hash = hash;
	slot->generation = (uint32) (stamp >> 32);
	slot->dbid = MyDatabaseId;
	slot->registry = my_registry;
	slot->mark = mark;
	slot->key = *key;
	strlcpy(slot->scope, scope, sizeof(slot->scope));
	slot->valid = true;
	set->fills++;
	SpinLockRelease(&set->mutex);
}

static void
shared_marks_message(Oid relid)
{
	if (shared == NULL)
		return;
	if (!OidIsValid(relid) || is_registry(relid))
		shared_marks_forget_all();
	else
		shared_marks_forget((uint32) relid);
}

/* Forget a scope of the set (the set's lock held exclusively). */
static void
forget_in(SharedMarkSet *set, uint32 hash)
{
	set->forgets++;
	for (int w = 0; w < SHARED_MARKS_WAYS; w++)
		if (set->ways[w].hash == hash && set->ways[w].dbid == MyDatabaseId)
			set->ways[w].valid = false;
}

static void
shared_marks_forget(uint32 hash)
{
	SharedMarkSet *set = lock_set(hash);

	if (set == NULL)
		return;
	forget_in(set, hash);
	SpinLockRelease(&set->mutex);
}

void
shared_marks_drain(uint32 hash, int64 scope_id)
{
	SharedMarkSet *set = lock_set(hash);
	VirtualTransactionId running[SHARED_MARKS_WRITERS];
	int			n = 0;

	if (set == NULL)
		return;
	forget_in(set, hash);
	for (int i = 0; i < SHARED_MARKS_WRITERS; i++)
	{
		MarkWriter *w = &set->writers[i];

		/* this backend's own registration is the raise's own transaction */
		if (w->scope_id == scope_id && w->dbid == MyDatabaseId &&
			w->procno != FENCING_MY_PROCNO && writer_running(w))
			running[n++] = w->vxid;
	}
	SpinLockRelease(&set->mutex);
	/* their slots stay: a wait cut short (lock_timeout) leaves them to the next raise */
	for (int i = 0; i < n; i++)
		(void) VirtualXactLock(running[i], true);
}

static void
shared_marks_forget_all(void)
{
	if (shared != NULL)
		pg_atomic_fetch_add_u32(&shared->generation, 1);
}

/*
 * fencing.shared_marks_info(): whether the cache is in use, its capacity,
 * the marks it holds now (every database), and since the server started the
 * hits, fills, forgets of one scope and forgets of all.
 */
FENCING_FUNCTION(fencing_shared_marks_info);

Datum
fencing_shared_marks_info(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[6] = {0};
	bool		nulls[6] = {0};
	int64		entries = 0;
	uint64		hits = 0;
	uint64		fills = 0;
	uint64		forgets = 0;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (shared != NULL)
	{
		uint32		generation = pg_atomic_read_u32(&shared->generation);

		for (uint32 i = 0; i < shared->nsets; i++)
		{
			SharedMarkSet *set = &shared->sets[i];

			SpinLockAcquire(&set->mutex);
			for (int w = 0; w < SHARED_MARKS_WAYS; w++)
				if (set->ways[w].valid && set->ways[w].generation == generation)
					entries++;
			hits += pg_atomic_read_u64(&set->hits);
			fills += set->fills;
			forgets += set->forgets;
			SpinLockRelease(&set->mutex);
		}
		values[0] = Int64GetDatum((int64) shared->nsets * SHARED_MARKS_WAYS);
		values[1] = Int64GetDatum(entries);
		values[2] = Int64GetDatum((int64) hits);
		values[3] = Int64GetDatum((int64) fills);
		values[4] = Int64GetDatum((int64) forgets);
		values[5] = Int64GetDatum((int64) generation - 1);
	}
	else
		values[0] = values[1] = values[2] = values[3] = values[4] = values[5] = Int64GetDatum(0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* Where a read of the registry started: it caches nothing if a message came. */
typedef struct MarkReadStart
{
	uint64		local;			/* this backend's count of messages */
	uint64		shared;			/* the shared cache's stamp */
} MarkReadStart;

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

static void
mark_cache_sync(void)
{
	FencingRegistry registry;

	/* first, so that every message taken in is told apart (shared_marks_message()) */
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

	entry = hash_search(scope_table_ready(&marks, "fencing cached marks", sizeof(CachedMark),
										  CacheMemoryContext, MARK_CACHE_MAX),
						&id, HASH_ENTER, NULL);
	strlcpy(entry->scope, scope, sizeof(entry->scope));
	entry->mark = mark;
	entry->key = *key;
	entry->share_pending = false;
	return entry;
}

static bool
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

static void
mark_cache_read_start(Oid id, MarkReadStart *start)
{
	reading_id = id;
	start->local = inval_counter;
	start->shared = shared_marks_stamp(id);
}

static void
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

/*
 * The committed mark of a scope, read from fencing.scopes with a fresh
 * snapshot.  The snapshot is taken after the table and its index are open:
 * opening a relation accepts invalidation messages, and a message consumed
 * after the snapshot is a change the read does not see (the mark cache also
 * guards against that with its counter).
 */
int64
mark_cache_read_row(const char *scope, HeapTuple *row, ScopeKey *key)
{
	Relation	rel = table_open(fencing_scopes_relid(), AccessShareLock);
	HeapTuple	tuple = direct_row_fetch(rel, fencing_scopes_pkey_relid(), scope);
	int64		mark = SCOPE_MARK_NONE;

	key->id = 0;
	key->owner = InvalidOid;
	key->legacy = false;
	key->issued = false;
	if (HeapTupleIsValid(tuple))
	{
		TupleDesc	desc = RelationGetDescr(rel);
		bool		isnull;
		Datum		d = heap_getattr(tuple, Anum_scopes_mark, desc, &isnull);

		if (!isnull)
			mark = DatumGetInt64(d);
		/* before 1.4's SQL the registry has no ids: the name's hash stands in */
		d = (Datum) 0;
		isnull = true;
		if (fencing_sql_at_least(FENCING_SQL_1_4))
			d = heap_getattr(tuple, Anum_scopes_id, desc, &isnull);
		key->legacy = isnull;
		key->id = isnull ? scope_lock_legacy_id(scope) : DatumGetInt64(d);
		if (key->id == 0)
			key->id = 1;		/* 0 says "no such scope" */
		if (fencing_sql_at_least(FENCING_SQL_1_2))
		{
			d = heap_getattr(tuple, Anum_scopes_owner, desc, &isnull);
			key->owner = isnull ? InvalidOid : DatumGetObjectId(d);
			d = heap_getattr(tuple, Anum_scopes_tokens, desc, &isnull);
			if (!isnull)
			{
				text	   *t = DatumGetTextPP(d);

				key->issued = VARSIZE_ANY_EXHDR(t) == 6 &&
					memcmp(VARDATA_ANY(t), "issued", 6) == 0;
			}
		}
	}
	if (row != NULL)
		*row = tuple;
	else if (tuple != NULL)
		heap_freetuple(tuple);
	table_close(rel, AccessShareLock);
	return mark;
}

/*
 * Whether a row version read is the scope's latest: no transaction updated
 * or deleted it (one that locked it only, or aborted, does not count).  A
 * version some transaction is replacing, or replaced after the snapshot, is
 * the committed mark now but will not stay it.
 */
static bool
row_is_latest(HeapTuple tuple)
{
	HeapTupleHeader tup = tuple->t_data;

	if ((tup->t_infomask & HEAP_XMAX_INVALID) || HEAP_XMAX_IS_LOCKED_ONLY(tup->t_infomask))
		return true;
	return TransactionIdDidAbort(HeapTupleHeaderGetUpdateXid(tup));
}

/*
 * The mark and the id of a scope: from this backend's marks, else the
 * server's (the caller holds the scope lock, or reads to learn the id to
 * lock by), else from the registry, then kept.  What is kept goes to the
 * server's marks only once a read under a lock confirmed to be the scope's
 * returns it in "fill" (mark_cache_share()).  "use_cache" false: read and
 * keep nothing in memory (a transaction that changed marks reads its own).
 */
int64
mark_cache_read(const char *scope, Oid id, bool use_cache, ScopeKey *key, MarkFill *fill)
{
	int64		mark;
	MarkReadStart read_start;
	HeapTuple	tuple;
	MarkShare	share = MARK_PRIVATE;
	bool		locked = fill != NULL;

	if (fill != NULL)
		fill->pending = false;
	mark_cache_sync();
	if (use_cache && mark_cache_get(id, scope, &mark, key, fill))
		return mark;
	mark_cache_read_start(id, &read_start);
	mark = mark_cache_read_row(scope, &tuple, key);
	if (tuple != NULL && row_is_latest(tuple))
		share = locked ? MARK_SHARE_NOW : MARK_SHARE_WHEN_LOCKED;
	if (tuple != NULL)
		heap_freetuple(tuple);
	if (use_cache)
		mark_cache_put(id, scope, mark, key, &read_start, share, fill);
	return mark;
}

/*
 * The mark, for a backend that holds the scope lock exclusively and is about
 * to change it: forgotten in memory first (a change of the row tells the
 * other backends too: forget_cached_marks), and read from the registry.
 */
int64
mark_cache_read_for_change(const char *scope, HeapTuple *row, ScopeKey *key)
{
	mark_cache_forget(scope);
	return mark_cache_read_row(scope, row, key);
}
