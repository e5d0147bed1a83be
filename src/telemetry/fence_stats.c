/*-------------------------------------------------------------------------
 *
 * fence_stats.c
 *	  Telemetry: counters of rejections, skips, bypasses, terms and lease
 *	  events in shared memory, and the log lines of rejections and skips.
 *
 * The counters live in a fixed-size hash table in shared memory (as
 * pg_stat_statements keeps its entries), one entry per (database, scope) and
 * one per (database, protected relation), at most fencing.stats_max in all.
 * The table's LWLock is taken shared to find an entry and exclusive only to
 * add one; each entry's counters and last occurrences are guarded by its own
 * spinlock, so concurrent increments are never lost.  When the table is full
 * a new key is not tracked (fencing.stats_info() counts what was lost that
 * way), while the keys it holds go on counting; fencing.stats_reset()
 * empties it for the current database.
 *
 * The table is shared by every role: each new entry is charged to the role
 * that owns what it counts (the table's owner, the scope's owner), and a
 * role other than a superuser holds at most fencing.stats_max_per_role
 * entries, so no role fills the table for the others.  Which scope an event
 * may be counted under (one that exists, that the writer's table is bound
 * to) is judged by the caller, telemetry/rejection.c, before it calls in;
 * a name that is not valid in the database encoding is never a key (the
 * views would hand it to clients).
 *
 * Only rare paths call in: a rejection (counted before its ereport(ERROR),
 * so the count survives the rolled-back transaction), a row left out under
 * policy skip, a write let through by fencing.bypass, a term issued, a lease
 * event.  An accepted write never reaches this file.
 *
 * Without shared_preload_libraries there is no shared memory: nothing is
 * counted, rejections and skips are still logged, the views show what the
 * tables say with null counters and a NOTICE (once per session), and
 * fencing.stats_reset() fails, as pg_stat_statements_reset() does.
 *
 *-------------------------------------------------------------------------
 */
#include "telemetry/fence_stats.h"

#include "base/input_checks.h"

#include <limits.h>

#include "common/ip.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#if PG_VERSION_NUM >= 140000
#include "utils/backend_status.h"
#else
#include "pgstat.h"
#endif
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#if PG_VERSION_NUM < 150000
#include "utils/tuplestore.h"
#endif

#define FENCE_STATS_NAME		"fencing stats"
#define FENCE_CLIENT_LEN		64

/* An entry is a scope's (relid invalid) or a relation's (scope empty). */
typedef struct FenceStatsKey
{
	Oid			dbid;
	Oid			relid;
	char		scope[FENCING_SCOPE_MAX_LEN + 1];
} FenceStatsKey;

/* The last rejection of one kind. */
typedef struct FenceLastEvent
{
	TimestampTz at;				/* 0: none since the entry was created */
	Oid			relid;			/* the relation written */
	int64		token;			/* offered; -1: none */
	int64		mark;			/* the mark it was below; -1: not known */
	int64		declared;		/* ZF005: the declared token; else -1 */
	char		role[NAMEDATALEN];
	char		application[NAMEDATALEN];
	char		client[FENCE_CLIENT_LEN];
} FenceLastEvent;

typedef struct FenceStatsEntry
{
	FenceStatsKey key;			/* hash key: must be first */
	Oid			charged_to;		/* the role whose share holds it; InvalidOid: none */
	slock_t		mutex;			/* guards everything below */
	TimestampTz since;
	int64		counters[FENCE_STAT_NUM];
	FenceLastEvent last[FENCE_STAT_NUM_KINDS];
} FenceStatsEntry;

/* The entries a role holds (roles with none have no share). */
typedef struct FenceRoleShare
{
	Oid			role;			/* hash key */
	int64		entries;
} FenceRoleShare;

typedef struct FenceStatsShared
{
	LWLock	   *lock;			/* guards the hash table's layout */
	pg_atomic_uint64 untracked; /* events lost because the table was full */
} FenceStatsShared;

static FenceStatsShared *stats = NULL;
static HTAB *stats_hash = NULL;
static HTAB *share_hash = NULL;	/* same lock as stats_hash */

/* settings */
static int	stats_max = 1000;
static int	stats_max_per_role = 250;
static int	log_rejections = LOG;
static int	log_skips = LOG;
static int	flapping_terms_per_hour = 30;

static bool not_collected_told = false;

#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* 0 is "off": below every elevel */
static const struct config_enum_entry log_level_options[] = {
	{"debug5", DEBUG5, false},
	{"debug4", DEBUG4, false},
	{"debug3", DEBUG3, false},
	{"debug2", DEBUG2, false},
	{"debug1", DEBUG1, false},
	{"info", INFO, false},
	{"notice", NOTICE, false},
	{"warning", WARNING, false},
	{"log", LOG, false},
	{"off", 0, false},
	{NULL, 0, false}
};

/* names and SQLSTATEs of the kinds of rejection, in FenceStatKind order */
static const char *const kind_names[FENCE_STAT_NUM_KINDS] = {
	"stale", "missing", "not_issued", "conflict", "skipped"
};
static const char *const kind_sqlstates[FENCE_STAT_NUM_KINDS] = {
	"ZF001", "ZF002", "ZF003", "ZF005", "ZF001"
};
static Size
stats_memsize(void)
{
	return add_size(add_size(MAXALIGN(sizeof(FenceStatsShared)),
							 hash_estimate_size(stats_max, sizeof(FenceStatsEntry))),
					hash_estimate_size(stats_max, sizeof(FenceRoleShare)));
}

#if PG_VERSION_NUM >= 150000
static void
fence_stats_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(stats_memsize());
	RequestNamedLWLockTranche(FENCE_STATS_NAME, 1);
}
#endif

static void
fence_stats_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	stats = NULL;
	stats_hash = NULL;
	share_hash = NULL;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	stats = ShmemInitStruct(FENCE_STATS_NAME, sizeof(FenceStatsShared), &found);
	if (!found)
	{
		stats->lock = &(GetNamedLWLockTranche(FENCE_STATS_NAME))->lock;
		pg_atomic_init_u64(&stats->untracked, 0);
	}
	info.keysize = sizeof(FenceStatsKey);
	info.entrysize = sizeof(FenceStatsEntry);
	stats_hash = ShmemInitHash(FENCE_STATS_NAME " hash", stats_max, stats_max,
							   &info, HASH_ELEM | HASH_BLOBS);
	/* a role with a share holds an entry: never more roles than entries */
	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(FenceRoleShare);
	share_hash = ShmemInitHash(FENCE_STATS_NAME " shares", stats_max, stats_max,
							   &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

void
fence_stats_init(void)
{
	DefineCustomEnumVariable("fencing.log_rejections",
							 "Level at which each rejected write is logged, with its SQLSTATE, scope, table, token and mark.",
							 NULL,
							 &log_rejections,
							 LOG, log_level_options,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("fencing.log_skips",
							 "Level at which each row left out under policy skip is logged.",
							 NULL,
							 &log_skips,
							 LOG, log_level_options,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("fencing.flapping_terms_per_hour",
							"A scope that issued more terms than this in the last hour is shown as flapping.",
							NULL,
							&flapping_terms_per_hour,
							30, 1, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	/* the rest needs shared memory; a postmaster setting can only be defined then */
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("fencing.stats_max",
							"Maximum number of scopes and relations whose fencing statistics are kept.",
							"Events of keys beyond it are not counted (see fencing.stats_info()).",
							&stats_max,
							1000, 100, 100000,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("fencing.stats_max_per_role",
							"Maximum number of statistics entries the scopes and tables of one role hold.",
							"An entry is charged to the owner of the scope or table it counts; superusers' are not bounded.",
							&stats_max_per_role,
							250, 1, 100000,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);
#if PG_VERSION_NUM >= 150000
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = fence_stats_shmem_request;
#else
	RequestAddinShmemSpace(stats_memsize());
	RequestNamedLWLockTranche(FENCE_STATS_NAME, 1);
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = fence_stats_shmem_startup;
}

bool
fence_stats_collected(void)
{
	return stats != NULL;
}

bool
fence_stats_scope_name_ok(const char *scope)
{
	size_t		len = strlen(scope);

	return len > 0 && len <= FENCING_SCOPE_MAX_LEN &&
		pg_verifymbstr(scope, (int) len, true);
}

static void
make_key(FenceStatsKey *key, Oid relid, const char *scope)
{
	memset(key, 0, sizeof(*key));
	key->dbid = MyDatabaseId;
	key->relid = relid;
	if (scope != NULL)
		strlcpy(key->scope, scope, sizeof(key->scope));
}

/*
 * A new entry for key, charged to role (InvalidOid: to nobody), if the
 * table and the role's share have room; the caller holds the lock
 * exclusively.
 */
static FenceStatsEntry *
stats_enter(const FenceStatsKey *key, Oid role)
{
	FenceStatsEntry *entry;
	FenceRoleShare *share = NULL;
	bool		found;

	if (hash_get_num_entries(stats_hash) >= stats_max)
		return NULL;
	if (OidIsValid(role))
	{
		share = hash_search(share_hash, &role, HASH_FIND, NULL);
		if (share != NULL && share->entries >= stats_max_per_role)
			return NULL;
		if (share == NULL)
		{
			share = hash_search(share_hash, &role, HASH_ENTER_NULL, &found);
			if (share == NULL)
				return NULL;
			share->entries = 0;
		}
	}
	entry = hash_search(stats_hash, key, HASH_ENTER_NULL, &found);
	if (entry == NULL)
	{
		if (share != NULL && share->entries == 0)
			(void) hash_search(share_hash, &role, HASH_REMOVE, NULL);
		return NULL;
	}
	if (!found)
	{
		entry->charged_to = role;
		SpinLockInit(&entry->mutex);
		entry->since = GetCurrentTimestamp();
		memset(entry->counters, 0, sizeof(entry->counters));
		memset(entry->last, 0, sizeof(entry->last));
		if (share != NULL)
			share->entries++;
	}
	return entry;
}

/* An entry leaves the table: its role's share shrinks. */
static void
stats_remove(FenceStatsEntry *entry)
{
	Oid			role = entry->charged_to;

	(void) hash_search(stats_hash, &entry->key, HASH_REMOVE, NULL);
	if (OidIsValid(role))
	{
		FenceRoleShare *share = hash_search(share_hash, &role, HASH_FIND, NULL);

		if (share != NULL && --share->entries <= 0)
			(void) hash_search(share_hash, &role, HASH_REMOVE, NULL);
	}
}

/*
 * Add one to a counter of an entry (creating it if there is room), and
 * remember the event as the last of its kind.  Never raises an error: it
 * runs right before the rejection's own.
 */
static void
stats_add(const FenceStatsKey *key, Oid role, FenceStatKind kind, const FenceLastEvent *ev)
{
	FenceStatsEntry *entry;

	LWLockAcquire(stats->lock, LW_SHARED);
	entry = hash_search(stats_hash, key, HASH_FIND, NULL);
	if (entry == NULL)
	{
		/* another backend may add it meanwhile: then it is found */
		LWLockRelease(stats->lock);
		LWLockAcquire(stats->lock, LW_EXCLUSIVE);
		entry = hash_search(stats_hash, key, HASH_FIND, NULL);
		if (entry == NULL)
			entry = stats_enter(key, role);
		if (entry == NULL)
		{
			LWLockRelease(stats->lock);
			pg_atomic_fetch_add_u64(&stats->untracked, 1);
			return;
		}
	}
	SpinLockAcquire(&entry->mutex);
	entry->counters[kind]++;
	if (ev != NULL && kind < FENCE_STAT_NUM_KINDS)
		entry->last[kind] = *ev;
	SpinLockRelease(&entry->mutex);
	LWLockRelease(stats->lock);
}

/* The role an entry is charged to: none for superusers (and no owner). */
static Oid
charge_role(Oid owner)
{
	return OidIsValid(owner) && !superuser_arg(owner) ? owner : InvalidOid;
}

/*
 * The client's address as pg_stat_activity shows it ("[local]" for a Unix
 * socket; empty for background processes).  Read from the backend's status
 * entry: the connection's own struct needs headers (GSSAPI) that a server's
 * development package may lack.
 */
void
fence_stats_client_address(char *buf, size_t len)
{
	const SockAddr *addr;
	char		host[NI_MAXHOST];

	buf[0] = '\0';
	if (MyBEEntry == NULL)
		return;
	addr = &MyBEEntry->st_clientaddr;
	if (addr->addr.ss_family == AF_UNIX)
		strlcpy(buf, "[local]", len);
	else if ((addr->addr.ss_family == AF_INET || addr->addr.ss_family == AF_INET6) &&
			 pg_getnameinfo_all(&addr->addr, addr->salen, host, sizeof(host),
								NULL, 0, NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		strlcpy(buf, host, len);
}

void
fence_stats_count(FenceStatKind kind, Oid relid, Oid rel_owner,
				  const char *scope, Oid scope_owner,
				  int64 token, int64 mark, int64 declared)
{
	FenceLastEvent ev;
	FenceStatsKey key;

	if (stats == NULL)
		return;
	if (kind < FENCE_STAT_NUM_KINDS)
	{
		const char *role = GetUserNameFromId(GetUserId(), true);

		memset(&ev, 0, sizeof(ev));
		ev.at = GetCurrentTimestamp();
		ev.relid = relid;
		ev.token = token;
		ev.mark = mark;
		ev.declared = declared;
		strlcpy(ev.role, role != NULL ? role : "", sizeof(ev.role));
		strlcpy(ev.application, application_name != NULL ? application_name : "",
				sizeof(ev.application));
		fence_stats_client_address(ev.client, sizeof(ev.client));
	}
	if (scope != NULL && fence_stats_scope_name_ok(scope))
	{
		make_key(&key, InvalidOid, scope);
		stats_add(&key, charge_role(scope_owner), kind,
				  kind < FENCE_STAT_NUM_KINDS ? &ev : NULL);
	}
	if (OidIsValid(relid))
	{
		make_key(&key, relid, NULL);
		stats_add(&key, charge_role(rel_owner), kind,
				  kind < FENCE_STAT_NUM_KINDS ? &ev : NULL);
	}
}

int
fence_stats_log_level(FenceStatKind kind)
{
	return kind == FENCE_STAT_SKIPPED ? log_skips : log_rejections;
}

const char *
fence_stats_kind_sqlstate(FenceStatKind kind)
{
	Assert(kind < FENCE_STAT_NUM_KINDS);
	return kind_sqlstates[kind];
}

/* Whether there is anything to read; says once per session why not. */
static bool
stats_collected(void)
{
	if (stats != NULL)
		return true;
	if (!not_collected_told)
	{
		not_collected_told = true;
		ereport(NOTICE,
				(errmsg("fencing statistics are not collected"),
				 errdetail("The counters are null: fencing was not loaded via shared_preload_libraries."),
				 errhint("Add fencing to shared_preload_libraries and restart the server.")));
	}
	return false;
}

#if PG_VERSION_NUM < 150000
/* InitMaterializedSRF() arrived in 15; the same for older servers. */
static void
InitMaterializedSRF(FunctionCallInfo fcinfo, bits32 flags)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext oldcxt;
	TupleDesc	tupdesc;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	oldcxt = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->setDesc = CreateTupleDescCopy(tupdesc);
	MemoryContextSwitchTo(oldcxt);
}
#endif

/* One row per scope (tables false) or per relation of this database. */
static void
emit_counters(FunctionCallInfo fcinfo, bool tables)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	FenceStatsEntry *entry;

	InitMaterializedSRF(fcinfo, 0);
	if (!stats_collected())
		return;
	LWLockAcquire(stats->lock, LW_SHARED);
	hash_seq_init(&seq, stats_hash);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[FENCE_STAT_NUM + 3];
		bool		nulls[FENCE_STAT_NUM + 3];
		int64		counters[FENCE_STAT_NUM];
		TimestampTz since;
		TimestampTz last = 0;
		int			i = 0;

		if (entry->key.dbid != MyDatabaseId || OidIsValid(entry->key.relid) != tables)
			continue;
		SpinLockAcquire(&entry->mutex);
		memcpy(counters, entry->counters, sizeof(counters));
		since = entry->since;
		for (int k = 0; k < FENCE_STAT_NUM_KINDS; k++)
			last = Max(last, entry->last[k].at);
		SpinLockRelease(&entry->mutex);

		memset(nulls, 0, sizeof(nulls));
		values[i++] = tables ? ObjectIdGetDatum(entry->key.relid) :
			CStringGetTextDatum(entry->key.scope);
		for (int k = 0; k < FENCE_STAT_NUM; k++)
			values[i++] = Int64GetDatum(counters[k]);
		nulls[i] = (last == 0);
		values[i++] = TimestampTzGetDatum(last);
		values[i++] = TimestampTzGetDatum(since);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(stats->lock);
}

/* fencing.scope_counters(): the counters of every scope of this database. */
FENCING_FUNCTION(fencing_scope_counters);

Datum
fencing_scope_counters(PG_FUNCTION_ARGS)
{
	emit_counters(fcinfo, false);
	return (Datum) 0;
}

/* fencing.table_counters(): the counters of every relation of this database. */
FENCING_FUNCTION(fencing_table_counters);

Datum
fencing_table_counters(PG_FUNCTION_ARGS)
{
	emit_counters(fcinfo, true);
	return (Datum) 0;
}

/*
 * fencing.last_rejection_events(): the last rejection of each kind, per
 * scope (by = 'scope') and per relation (by = 'table').
 */
FENCING_FUNCTION(fencing_last_rejection_events);

Datum
fencing_last_rejection_events(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	FenceStatsEntry *entry;

	InitMaterializedSRF(fcinfo, 0);
	if (!stats_collected())
		return (Datum) 0;
	LWLockAcquire(stats->lock, LW_SHARED);
	hash_seq_init(&seq, stats_hash);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		FenceLastEvent last[FENCE_STAT_NUM_KINDS];
		bool		by_table = OidIsValid(entry->key.relid);

		if (entry->key.dbid != MyDatabaseId)
			continue;
		SpinLockAcquire(&entry->mutex);
		memcpy(last, entry->last, sizeof(last));
		SpinLockRelease(&entry->mutex);

		for (int k = 0; k < FENCE_STAT_NUM_KINDS; k++)
		{
			const FenceLastEvent *ev = &last[k];
			Datum		values[12];
			bool		nulls[12];

			if (ev->at == 0)
				continue;
			memset(nulls, 0, sizeof(nulls));
			values[0] = CStringGetTextDatum(by_table ? "table" : "scope");
			nulls[1] = by_table;
			values[1] = by_table ? (Datum) 0 : CStringGetTextDatum(entry->key.scope);
			nulls[2] = !OidIsValid(ev->relid);
			values[2] = ObjectIdGetDatum(ev->relid);
			values[3] = CStringGetTextDatum(kind_names[k]);
			values[4] = CStringGetTextDatum(kind_sqlstates[k]);
			values[5] = TimestampTzGetDatum(ev->at);
			nulls[6] = ev->token < 0;
			values[6] = Int64GetDatum(ev->token);
			nulls[7] = ev->mark < 0;
			values[7] = Int64GetDatum(ev->mark);
			nulls[8] = ev->declared < 0;
			values[8] = Int64GetDatum(ev->declared);
			values[9] = CStringGetTextDatum(ev->role);
			values[10] = CStringGetTextDatum(ev->application);
			nulls[11] = ev->client[0] == '\0';
			values[11] = CStringGetTextDatum(ev->client);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	LWLockRelease(stats->lock);
	return (Datum) 0;
}

/*
 * fencing.stats_info(): whether statistics are collected, how many entries
 * the table holds, its size, and events lost because it was full.
 */
FENCING_FUNCTION(fencing_stats_info);

Datum
fencing_stats_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = BoolGetDatum(stats != NULL);
	values[2] = Int32GetDatum(stats_max);
	if (stats != NULL)
	{
		LWLockAcquire(stats->lock, LW_SHARED);
		values[1] = Int64GetDatum(hash_get_num_entries(stats_hash));
		LWLockRelease(stats->lock);
		values[3] = Int64GetDatum((int64) pg_atomic_read_u64(&stats->untracked));
	}
	else
	{
		nulls[1] = nulls[3] = true;
		values[1] = values[3] = (Datum) 0;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/* Forget every counter and last occurrence of database dbid. */
void
fence_stats_database_created(Oid dbid)
{
	HASH_SEQ_STATUS seq;
	FenceStatsEntry *entry;

	if (stats == NULL)
		return;
	LWLockAcquire(stats->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, stats_hash);
	while ((entry = hash_seq_search(&seq)) != NULL)
		if (entry->key.dbid == dbid)
			stats_remove(entry);
	LWLockRelease(stats->lock);
}

/*
 * fencing.stats_reset(): forgets the counters and last occurrences of every
 * scope and relation of the current database.  Not for PUBLIC.
 */
FENCING_FUNCTION(fencing_stats_reset);

Datum
fencing_stats_reset(PG_FUNCTION_ARGS)
{
	if (stats == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fencing must be loaded via shared_preload_libraries to collect statistics"),
				 errhint("Add fencing to shared_preload_libraries in postgresql.conf and restart the server.")));
	fence_stats_database_created(MyDatabaseId);
	PG_RETURN_TIMESTAMPTZ(GetCurrentTimestamp());
}
