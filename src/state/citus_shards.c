/*-------------------------------------------------------------------------
 *
 * citus_shards.c
 *	  Citus's metadata as the fence needs it: which distributed table a shard
 *	  belongs to, whether a table is a Citus table, whether this node is a
 *	  worker, and whether a worker's marks are current.
 *
 * Guarantees:
 *   - No link-time dependency on Citus: its catalogs (pg_dist_shard,
 *     pg_dist_partition, pg_dist_local_group in pg_catalog) are found by
 *     name and read directly; without them every answer is "not Citus".
 *   - Nothing costs a catalog read on the fence's path per write: answers
 *     are cached per relation (dropped on its relcache invalidation) and,
 *     for the node's role, until Citus invalidates pg_dist_local_group
 *     (Citus does so whenever it changes it).  A relation whose name does
 *     not end in "_<digits>", the form of every Citus shard's name, is
 *     answered without any catalog read.
 *   - A cache is filled only from a read no invalidation overtook (an
 *     invalidation counter taken before the read), as catcache does.
 *   - No relcache callback of its own: a backend has ten slots, and Citus
 *     takes several; the state layer's one callback calls
 *     citus_shards_relcache_invalidate().
 *   - A node recorded as a worker in fencing.node_state (once the
 *     coordinator fed it) is a worker, whatever pg_dist_local_group says
 *     later: stop_metadata_sync_to_node() makes a worker's group 0.
 *   - A worker's marks are current only while Citus's metadata gives it the
 *     placement of fencing.cluster_marks it last took every scope through
 *     (fencing.node_state.fed_via): Citus drops a node's placement when it
 *     disables or removes the node, and makes a new one, by copying rows
 *     (no trigger fires), when it activates or adds it again.  Only a
 *     "current" answer is cached, until an invalidation of the table, its
 *     placement (Citus invalidates the table when a placement changes) or
 *     fencing.node_state.
 *   - With fencing.citus_worker_start = 'refuse', a worker's marks are
 *     current only once it took every scope since its server started
 *     (fencing.node_state.fed_start is this postmaster's start): a node
 *     disabled while it was down may have missed takeovers, and keeps its
 *     old metadata until it is activated, so nothing else tells it.
 *   - A relation just created is matched to its Citus table by the
 *     metadata, else, when Citus's own connection created it, only by the
 *     exact name Citus gives that table's shard of that id
 *     (citus_new_shard_table()).
 *   - Rows written into a relation created in the writing transaction
 *     are taken as Citus's copy of its table's rows (not judged) only when
 *     the metadata names it that table's shard, or, where the metadata
 *     names no shard of its id (Citus's connection from the coordinator to
 *     itself, which cannot see the distributing transaction's metadata),
 *     when Citus's own connection, as a role with the privileges of the
 *     owner of the fenced table it is named after, writes a relation of
 *     that owner that is no partition of that table
 *     (citus_shard_in_the_making()).
 *
 *-------------------------------------------------------------------------
 */
#include "state/citus_shards.h"
#include "state/cluster_marks.h"
#include "state/extension_state.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_trigger.h"
#include "common/hashfn.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

typedef struct ShardEntry
{
	Oid			relid;			/* hash key: the relation asked about */
	Oid			table;			/* its distributed table, or InvalidOid */
} ShardEntry;

/* fencing.citus_worker_start */
typedef enum CitusWorkerStart
{
	CITUS_WORKER_START_TRUST,
	CITUS_WORKER_START_REFUSE
} CitusWorkerStart;

static const struct config_enum_entry worker_start_options[] = {
	{"trust", CITUS_WORKER_START_TRUST, false},
	{"refuse", CITUS_WORKER_START_REFUSE, false},
	{NULL, 0, false}
};

static int	citus_worker_start = CITUS_WORKER_START_TRUST;

static HTAB *shard_cache = NULL;	/* relid -> ShardEntry, CacheMemoryContext */
static uint64 invalidations = 0;	/* bumped by every invalidation we see */

/* This node's Citus group: -2 not read yet, -1 no Citus, 0 the coordinator. */
static int32 local_group = -2;
static Oid	local_group_relid = InvalidOid;

/* fencing.node_state as read: NODE_ROLE_UNREAD until read (again). */
#define NODE_ROLE_UNREAD	(-1)
static int	node_role = NODE_ROLE_UNREAD;
static Oid	node_fed_via = InvalidOid;
static bool node_fed_since_start = false;	/* fed_start is PgStartTime */
static TimestampTz node_lease_ends = 0; /* lease_from + lease; 0: no lease */
static Oid	node_state_relid = InvalidOid;
static int	last_role = NODE_ROLE_NONE;	/* the last read's answer */

/* A worker's marks were found current (only that answer is kept). */
static bool marks_current = false;
static Oid	marks_shell_relid = InvalidOid;

/* This transaction wrote by scope on a worker under a lease (end_of_xact.c). */
static bool wrote_under_lease = false;

void
citus_shards_relcache_invalidate(Oid relid)
{
	invalidations++;
	/* Citus invalidates pg_dist_local_group when it changes it */
	if (relid == InvalidOid || relid == local_group_relid ||
		!OidIsValid(local_group_relid))
		local_group = -2;
	if (relid == InvalidOid || relid == node_state_relid || !OidIsValid(node_state_relid))
	{
		node_role = NODE_ROLE_UNREAD;
		marks_current = false;
	}
	if (relid == marks_shell_relid || relid == node_fed_via)
		marks_current = false;
	if (shard_cache == NULL)
		return;
	if (relid == InvalidOid)
	{
		HASH_SEQ_STATUS status;
		ShardEntry *entry;

		hash_seq_init(&status, shard_cache);
		while ((entry = hash_seq_search(&status)) != NULL)
			(void) hash_search(shard_cache, &entry->relid, HASH_REMOVE, NULL);
	}
	else
		(void) hash_search(shard_cache, &relid, HASH_REMOVE, NULL);
}

/* A change of fencing.citus_worker_start: judge the marks again. */
static void
citus_worker_start_assign(int newval, void *extra)
{
	marks_current = false;
}

void
citus_shards_init(void)
{
	HASHCTL		ctl;

	DefineCustomEnumVariable("fencing.citus_worker_start",
							 "Whether a Citus worker's marks are trusted after its server started before the coordinator fed it again.",
							 "trust: the marks it last took, while its placement of fencing.cluster_marks is in Citus's metadata; "
							 "refuse: every write by scope on the worker is refused (55000) until the coordinator feeds it "
							 "(fencing.distribute_marks() or any takeover): a node disabled while it was down, and started "
							 "again, cannot tell that it missed takeovers until it is activated.",
							 &citus_worker_start,
							 CITUS_WORKER_START_TRUST,
							 worker_start_options,
							 PGC_SIGHUP, 0,
							 NULL, citus_worker_start_assign, NULL);

	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(ShardEntry);
	ctl.hcxt = CacheMemoryContext;
	shard_cache = hash_create("fencing citus shards", 32, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* A catalog of Citus in pg_catalog, or InvalidOid when Citus is not installed. */
static Oid
citus_catalog(const char *name)
{
	return get_relname_relid(name, PG_CATALOG_NAMESPACE);
}

/*
 * The value of column valcol of the row of catalog catname whose column
 * keycol equals key (an int8 or an oid, per keytype), read through index
 * indexname when it exists.  False when Citus or the row is missing.
 */
static bool
catalog_lookup(const char *catname, const char *indexname, const char *keycol,
			   Datum key, bool key_is_int8, const char *valcol, Datum *value)
{
	Oid			catoid = citus_catalog(catname);
	Oid			indexoid;
	Relation	catrel;
	AttrNumber	keyatt;
	AttrNumber	valatt;
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		found = false;

	if (!OidIsValid(catoid))
		return false;
	keyatt = get_attnum(catoid, keycol);
	valatt = get_attnum(catoid, valcol);
	if (keyatt == InvalidAttrNumber || valatt == InvalidAttrNumber)
		return false;
	indexoid = citus_catalog(indexname);
	catrel = table_open(catoid, AccessShareLock);
	ScanKeyInit(&skey, keyatt, BTEqualStrategyNumber,
				key_is_int8 ? F_INT8EQ : F_OIDEQ, key);
	scan = systable_beginscan(catrel, indexoid, OidIsValid(indexoid), NULL, 1, &skey);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;

		*value = heap_getattr(tuple, valatt, RelationGetDescr(catrel), &isnull);
		found = !isnull;
	}
	systable_endscan(scan);
	table_close(catrel, AccessShareLock);
	return found;
}

/* The shard id a relation's name ends with ("jobs_102008"), or 0. */
static int64
name_shard_id(const char *name)
{
	const char *underscore = strrchr(name, '_');
	const char *p;
	int64		id = 0;

	if (underscore == NULL || underscore == name || underscore[1] == '\0')
		return 0;
	for (p = underscore + 1; *p != '\0'; p++)
	{
		if (*p < '0' || *p > '9' || id > (PG_INT64_MAX - 9) / 10)
			return 0;
		id = id * 10 + (*p - '0');
	}
	return id;
}

static Oid
lookup_shard_table(Relation rel)
{
	int64		shardid = name_shard_id(RelationGetRelationName(rel));
	Datum		value;
	Oid			table;

	if (shardid <= 0 || !OidIsValid(citus_catalog("pg_dist_shard")))
		return InvalidOid;
	if (!catalog_lookup("pg_dist_shard", "pg_dist_shard_shardid_index", "shardid",
						Int64GetDatum(shardid), true, "logicalrelid", &value))
		return InvalidOid;
	table = DatumGetObjectId(value);

	/* a shard lives beside its table, and a Citus table is no shard */
	if (table == RelationGetRelid(rel) ||
		get_rel_namespace(table) != RelationGetNamespace(rel) ||
		citus_is_citus_table(RelationGetRelid(rel)))
		return InvalidOid;
	return table;
}

Oid
citus_shard_table(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	ShardEntry *entry;
	bool		found;
	uint64		before;
	Oid			table;

	/* every shard's name ends in "_<shard id>": others need no lookup */
	if (name_shard_id(RelationGetRelationName(rel)) <= 0)
		return InvalidOid;
	entry = hash_search(shard_cache, &relid, HASH_FIND, &found);
	if (found)
		return entry->table;
	before = invalidations;
	table = lookup_shard_table(rel);
	if (before == invalidations)
	{
		entry = hash_search(shard_cache, &relid, HASH_ENTER, &found);
		entry->table = table;
	}
	return table;
}

bool
citus_is_citus_table(Oid relid)
{
	Datum		value;

	return catalog_lookup("pg_dist_partition", "pg_dist_partition_logical_relid_index",
						  "logicalrelid", ObjectIdGetDatum(relid), false,
						  "logicalrelid", &value);
}

/* This node's group in pg_dist_local_group, -1 without Citus; cached. */
static int32
citus_local_group(void)
{
	Oid			catoid;
	AttrNumber	groupatt;
	Relation	catrel;
	SysScanDesc scan;
	HeapTuple	tuple;
	uint64		before;
	int32		group = -1;

	if (local_group != -2)
		return local_group;
	before = invalidations;
	catoid = citus_catalog("pg_dist_local_group");
	local_group_relid = catoid;
	if (OidIsValid(catoid) &&
		(groupatt = get_attnum(catoid, "groupid")) != InvalidAttrNumber)
	{
		catrel = table_open(catoid, AccessShareLock);
		scan = systable_beginscan(catrel, InvalidOid, false, NULL, 0, NULL);
		tuple = systable_getnext(scan);
		if (HeapTupleIsValid(tuple))
		{
			bool		isnull;
			Datum		value = heap_getattr(tuple, groupatt, RelationGetDescr(catrel), &isnull);

			if (!isnull)
				group = DatumGetInt32(value);
		}
		systable_endscan(scan);
		table_close(catrel, AccessShareLock);
	}
	if (before == invalidations)
		local_group = group;
	return group;
}

/*
 * When the feed lease recorded in node_state's row ends on this node's clock
 * (lease_from + lease), or 0: no lease (none taken, turned off, or the
 * columns predate it).  A lease that ends at once is still a lease.
 */
static TimestampTz
read_lease_ends(Oid relid, HeapTuple tuple, TupleDesc desc)
{
	AttrNumber	leaseatt = get_attnum(relid, "lease");
	AttrNumber	fromatt = get_attnum(relid, "lease_from");
	bool		lease_null;
	bool		from_null;
	Datum		lease;
	Datum		from;
	TimestampTz ends;

	if (leaseatt == InvalidAttrNumber || fromatt == InvalidAttrNumber)
		return 0;
	lease = heap_getattr(tuple, leaseatt, desc, &lease_null);
	from = heap_getattr(tuple, fromatt, desc, &from_null);
	if (lease_null || from_null)
		return 0;
	ends = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval, from, lease));
	return ends == 0 ? 1 : ends;
}

/* fencing.node_state's row, cached until its invalidation. */
static void
read_node_state(void)
{
	Oid			nsp;
	Oid			relid;
	uint64		before;
	int			role = NODE_ROLE_NONE;
	Oid			fed = InvalidOid;
	bool		fed_since_start = false;
	TimestampTz lease_ends = 0;

	if (node_role != NODE_ROLE_UNREAD)
		return;
	before = invalidations;
	nsp = get_namespace_oid(FENCING_SCHEMA, true);
	relid = OidIsValid(nsp) ? get_relname_relid(NODE_STATE_RELNAME, nsp) : InvalidOid;
	if (OidIsValid(relid))
	{
		AttrNumber	roleatt = get_attnum(relid, "role");
		AttrNumber	fedatt = get_attnum(relid, "fed_via");
		AttrNumber	startatt = get_attnum(relid, "fed_start");
		Relation	rel = table_open(relid, AccessShareLock);
		/* the row as last committed (it is no catalog: no catalog snapshot) */
		Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
		SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, snapshot, 0, NULL);
		HeapTuple	tuple = systable_getnext(scan);

		if (HeapTupleIsValid(tuple) && roleatt != InvalidAttrNumber && fedatt != InvalidAttrNumber)
		{
			bool		isnull;
			Datum		value = heap_getattr(tuple, roleatt, RelationGetDescr(rel), &isnull);

			if (!isnull)
				role = strcmp(TextDatumGetCString(value), "worker") == 0 ?
					NODE_ROLE_WORKER : NODE_ROLE_COORDINATOR;
			value = heap_getattr(tuple, fedatt, RelationGetDescr(rel), &isnull);
			if (!isnull)
				fed = DatumGetObjectId(value);
			if (startatt != InvalidAttrNumber)
			{
				value = heap_getattr(tuple, startatt, RelationGetDescr(rel), &isnull);
				fed_since_start = !isnull && DatumGetTimestampTz(value) == PgStartTime;
			}
			lease_ends = read_lease_ends(relid, tuple, RelationGetDescr(rel));
		}
		systable_endscan(scan);
		UnregisterSnapshot(snapshot);
		table_close(rel, AccessShareLock);
	}
	node_state_relid = relid;
	node_fed_via = fed;
	node_fed_since_start = fed_since_start;
	node_lease_ends = lease_ends;
	last_role = role;
	/* an answer an invalidation overtook is read again next time */
	node_role = before == invalidations ? role : NODE_ROLE_UNREAD;
}

int
citus_node_recorded_role(void)
{
	read_node_state();
	return last_role;
}

Oid
citus_node_fed_via(void)
{
	read_node_state();
	return node_fed_via;
}

bool
citus_node_fed_since_start(void)
{
	read_node_state();
	return node_fed_since_start;
}

bool
citus_node_state_exists(void)
{
	read_node_state();
	return OidIsValid(node_state_relid);
}

bool
citus_node_is_worker(void)
{
	return citus_local_group() > 0 || citus_node_recorded_role() == NODE_ROLE_WORKER;
}

bool
citus_node_looks_coordinator(void)
{
	Oid			catoid = citus_catalog("pg_dist_node");
	Relation	catrel;
	SysScanDesc scan;
	bool		nodes;

	if (citus_local_group() != 0 || !OidIsValid(catoid))
		return false;
	/* a worker whose metadata sync was stopped has group 0 and no nodes */
	catrel = table_open(catoid, AccessShareLock);
	scan = systable_beginscan(catrel, InvalidOid, false, NULL, 0, NULL);
	nodes = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(catrel, AccessShareLock);
	return nodes;
}

bool
citus_is_local_table(Oid relid)
{
	Datum		method;
	Datum		repmodel;
	Datum		colocation;

	if (!catalog_lookup("pg_dist_partition", "pg_dist_partition_logical_relid_index",
						"logicalrelid", ObjectIdGetDatum(relid), false,
						"partmethod", &method) ||
		!catalog_lookup("pg_dist_partition", "pg_dist_partition_logical_relid_index",
						"logicalrelid", ObjectIdGetDatum(relid), false,
						"repmodel", &repmodel) ||
		!catalog_lookup("pg_dist_partition", "pg_dist_partition_logical_relid_index",
						"logicalrelid", ObjectIdGetDatum(relid), false,
						"colocationid", &colocation))
		return false;
	/* no distribution column, not replicated to every node, colocated with none */
	return DatumGetChar(method) == 'n' && DatumGetChar(repmodel) != 't' &&
		DatumGetInt32(colocation) == 0;
}

/* Whether this node holds a placement of shard shardid. */
static bool
placement_is_local(int64 shardid, int32 group)
{
	Oid			catoid = citus_catalog("pg_dist_placement");
	Oid			indexoid = citus_catalog("pg_dist_placement_shardid_index");
	AttrNumber	shardatt;
	AttrNumber	groupatt;
	Relation	catrel;
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		local = false;

	if (!OidIsValid(catoid) ||
		(shardatt = get_attnum(catoid, "shardid")) == InvalidAttrNumber ||
		(groupatt = get_attnum(catoid, "groupid")) == InvalidAttrNumber)
		return false;
	catrel = table_open(catoid, AccessShareLock);
	ScanKeyInit(&skey, shardatt, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(shardid));
	scan = systable_beginscan(catrel, indexoid, OidIsValid(indexoid), NULL, 1, &skey);
	while (!local && HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		value = heap_getattr(tuple, groupatt, RelationGetDescr(catrel), &isnull);

		local = !isnull && DatumGetInt32(value) == group;
	}
	systable_endscan(scan);
	table_close(catrel, AccessShareLock);
	return local;
}

List *
citus_local_shards(Relation table, char **unfound)
{
	Oid			catoid = citus_catalog("pg_dist_shard");
	Oid			indexoid = citus_catalog("pg_dist_shard_logical_relid_index");
	AttrNumber	relatt;
	AttrNumber	shardatt;
	Relation	catrel;
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tuple;
	List	   *shardids = NIL;
	List	   *relids = NIL;
	ListCell   *lc;
	int32		group = citus_local_group();

	*unfound = NULL;
	if (!OidIsValid(catoid) || group < 0 ||
		(relatt = get_attnum(catoid, "logicalrelid")) == InvalidAttrNumber ||
		(shardatt = get_attnum(catoid, "shardid")) == InvalidAttrNumber)
		return NIL;
	catrel = table_open(catoid, AccessShareLock);
	ScanKeyInit(&skey, relatt, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationGetRelid(table)));
	scan = systable_beginscan(catrel, indexoid, OidIsValid(indexoid), NULL, 1, &skey);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		value = heap_getattr(tuple, shardatt, RelationGetDescr(catrel), &isnull);
		int64	   *id;

		if (isnull)
			continue;
		id = palloc(sizeof(int64));
		*id = DatumGetInt64(value);
		shardids = lappend(shardids, id);
	}
	systable_endscan(scan);
	table_close(catrel, AccessShareLock);

	foreach(lc, shardids)
	{
		int64		shardid = *(int64 *) lfirst(lc);
		char	   *name;
		Oid			relid;

		if (!placement_is_local(shardid, group))
			continue;
		/* Citus names a shard <table>_<shard id> (a longer name is shortened) */
		name = psprintf("%s_" INT64_FORMAT, RelationGetRelationName(table), shardid);
		relid = strlen(name) < NAMEDATALEN ?
			get_relname_relid(name, RelationGetNamespace(table)) : InvalidOid;
		if (!OidIsValid(relid))
		{
			*unfound = name;
			return NIL;
		}
		relids = lappend_oid(relids, relid);
	}
	return relids;
}

const char *
citus_shown_relname(Relation rel)
{
	Oid			table = citus_shard_table(rel);
	char	   *name = OidIsValid(table) ? get_rel_name(table) : NULL;

	return name != NULL ? name : RelationGetRelationName(rel);
}

Oid
citus_shown_relid(Relation rel)
{
	Oid			table = citus_shard_table(rel);

	return OidIsValid(table) ? table : RelationGetRelid(rel);
}

bool
citus_shard_placed_here(Relation rel)
{
	int64		shardid = name_shard_id(RelationGetRelationName(rel));
	int32		group = citus_local_group();

	return shardid > 0 && group >= 0 && placement_is_local(shardid, group);
}

bool
citus_installed(void)
{
	return OidIsValid(citus_catalog("pg_dist_local_group"));
}

Oid
citus_shard_table_uncached(Relation rel)
{
	citus_shards_relcache_invalidate(RelationGetRelid(rel));
	return citus_shard_table(rel);
}

const char *
citus_node_marks_stale(void)
{
	Oid			nsp;
	Oid			shell;
	Oid			fed;
	int32		group;
	uint64		before;
	const char *why = NULL;
	Datum		value;

	/*
	 * The lease is judged on every call, cached answer or not: time, not an
	 * invalidation, ends it.  No lease, no cost but a test.
	 */
	read_node_state();
	if (node_lease_ends != 0 && GetCurrentTimestamp() >= node_lease_ends)
		return psprintf("its feed lease from the coordinator ran out at %s (fencing.renew_cluster_lease() has not renewed it since): a node cut off from the coordinator may have missed takeovers",
						timestamptz_to_str(node_lease_ends));
	if (marks_current)
		return NULL;
	before = invalidations;
	fed = citus_node_fed_via();
	/* the library is newer than the SQL (before ALTER EXTENSION UPDATE): as 1.4 */
	if (!OidIsValid(node_state_relid))
		return NULL;
	nsp = get_namespace_oid(FENCING_SCHEMA, true);
	shell = OidIsValid(nsp) ? get_relname_relid(CLUSTER_MARKS_RELNAME, nsp) : InvalidOid;
	group = citus_local_group();
	if (!OidIsValid(fed))
		why = "it has not taken every scope from the coordinator since it joined the cluster (or since the extension was updated)";
	else if (citus_worker_start == CITUS_WORKER_START_REFUSE && !node_fed_since_start)
		why = "it has not taken every scope from the coordinator since its server started (fencing.citus_worker_start = 'refuse'): a node disabled while it was down may have missed takeovers";
	else if (OidIsValid(shell) && group > 0 &&
			 catalog_lookup("pg_dist_shard", "pg_dist_shard_logical_relid_index", "logicalrelid",
							ObjectIdGetDatum(shell), false, "shardid", &value))
	{
		int64		shardid = DatumGetInt64(value);
		char	   *name = psprintf("%s_" INT64_FORMAT, CLUSTER_MARKS_RELNAME, shardid);

		if (!placement_is_local(shardid, group))
			why = "Citus's metadata gives it no placement of fencing.cluster_marks (the node was disabled or removed), so the coordinator's changes of marks no longer reach it";
		else if (get_relname_relid(name, nsp) != fed)
			why = "its placement of fencing.cluster_marks was made again by Citus (the node was activated or added again), and it has not taken every scope through it since";
	}
	else if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(fed)))
		why = "the placement of fencing.cluster_marks it took its marks through is gone";
	marks_shell_relid = shell;
	if (why == NULL && before == invalidations)
		marks_current = true;
	return why;
}

void
citus_node_lease_note_write(void)
{
	read_node_state();
	if (node_lease_ends != 0)
		wrote_under_lease = true;
}

void
citus_node_lease_before_commit(void)
{
	const char *why;

	if (!wrote_under_lease)
		return;
	wrote_under_lease = false;
	/* a renewal committed since this transaction began counts */
	AcceptInvalidationMessages();
	read_node_state();
	if (node_lease_ends == 0 || GetCurrentTimestamp() < node_lease_ends)
		return;
	why = timestamptz_to_str(node_lease_ends);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot commit a write by scope: this Citus worker's feed lease ran out"),
			 errdetail("The transaction wrote by scope under the feed lease from the coordinator, which ran out at %s, before it committed: a node cut off from the coordinator may have missed takeovers.",
					   why),
			 errhint("Run SELECT * FROM fencing.renew_cluster_lease() on the coordinator (a superuser), regularly, every third of the lease; then retry.")));
}

void
citus_node_lease_at_xact_end(void)
{
	wrote_under_lease = false;
}

/*
 * The name Citus gives shard "shardid" of table "table" (its rule, as the
 * Citus sources describe it): "<table>_<shard id>", or, when that would
 * not fit in a name, the table's name clipped, "_", the table name's hash
 * in eight hex digits, "_<shard id>".
 */
static void
citus_shard_name(const char *table, int64 shardid, char *out)
{
	char		suffix[NAMEDATALEN];
	int			len = strlen(table);
	int			suffix_len;

	snprintf(suffix, sizeof(suffix), "_" INT64_FORMAT, shardid);
	suffix_len = strlen(suffix);
	if (len < NAMEDATALEN - suffix_len)
		snprintf(out, NAMEDATALEN, "%s%s", table, suffix);
	else
	{
		uint32		hash = DatumGetUInt32(hash_any((const unsigned char *) table, len));
		int			clip = pg_mbcliplen(table, len, NAMEDATALEN - suffix_len - 10);

		snprintf(out, NAMEDATALEN, "%.*s_%.8x%s", clip, table, hash, suffix);
	}
}

/* Whether rel is named as Citus names shard "shardid" of table, beside it. */
static bool
shard_name_of(Relation rel, Oid table, int64 shardid)
{
	char		name[NAMEDATALEN];
	char	   *table_name;

	if (!OidIsValid(table) || table == RelationGetRelid(rel) ||
		get_rel_namespace(table) != RelationGetNamespace(rel) ||
		(table_name = get_rel_name(table)) == NULL)
		return false;
	citus_shard_name(table_name, shardid, name);
	return strcmp(name, RelationGetRelationName(rel)) == 0;
}

/* Whether relation "table" is a Citus table whose shard "shardid" rel would be. */
static bool
named_as_shard_of(Relation rel, Oid table, int64 shardid)
{
	return shard_name_of(rel, table, shardid) && citus_is_citus_table(table);
}

/*
 * The table of rel's schema that Citus would name shard "shardid" of as
 * rel is named, by the name alone: "<table>_<shard id>", or, a long name
 * shortened, "<clip>_<8 hex digits>_<shard id>", a table whose name starts
 * with <clip> (pg_class's name index, from <clip> on).  InvalidOid: none.
 */
static Oid
table_named_by_shard(Relation rel, int64 shardid)
{
	const char *name = RelationGetRelationName(rel);
	char	   *prefix = pnstrdup(name, strrchr(name, '_') - name);
	int			cliplen = (int) strlen(prefix) - 9;
	Oid			table = get_relname_relid(prefix, RelationGetNamespace(rel));
	Relation	classrel;
	NameData	clip;
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tuple;

	if (shard_name_of(rel, table, shardid))
		return table;
	if (cliplen < 1 || prefix[cliplen] != '_' ||
		strspn(prefix + cliplen + 1, "0123456789abcdef") != 8)
		return InvalidOid;
	prefix[cliplen] = '\0';
	namestrcpy(&clip, prefix);
	table = InvalidOid;
	classrel = table_open(RelationRelationId, AccessShareLock);
	ScanKeyInit(&skey, Anum_pg_class_relname, BTGreaterEqualStrategyNumber,
				F_NAMEGE, NameGetDatum(&clip));
	scan = systable_beginscan(classrel, ClassNameNspIndexId, true, NULL, 1, &skey);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tuple);
		char		shard[NAMEDATALEN];

		/* names in byte order (pg_class.relname collates as "C"): past the clip, done */
		if (strncmp(NameStr(form->relname), prefix, cliplen) != 0)
			break;
		if (form->relnamespace != RelationGetNamespace(rel) ||
			form->oid == RelationGetRelid(rel))
			continue;
		citus_shard_name(NameStr(form->relname), shardid, shard);
		if (strcmp(shard, name) == 0)
		{
			table = form->oid;
			break;
		}
	}
	systable_endscan(scan);
	table_close(classrel, AccessShareLock);
	return table;
}

/* Whether table carries a fence trigger of its own (not an interim one). */
static bool
table_is_fenced(Oid table, Oid fence_fn)
{
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		fenced = false;

	ScanKeyInit(&skey, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(table));
	scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 1, &skey);
	while (!fenced && HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_trigger form = (Form_pg_trigger) GETSTRUCT(tuple);

		fenced = form->tgfoid == fence_fn && !form->tgisinternal;
	}
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);
	return fenced;
}

/*
 * A shard that Citus creates and fills, in this transaction, through its
 * connection from a node to itself while it distributes a table (the
 * coordinator's own placement of a reference table, or of a distributed
 * table's shard when the coordinator has shards).  That backend's
 * transaction is not the distributing one: it cannot see the metadata that
 * transaction writes (pg_dist_partition, pg_dist_shard) before it commits,
 * so the shard is recognised without it.  Every condition must hold:
 *
 *   - Citus's metadata names no shard of this id (else it decided above);
 *   - the backend serves one of Citus's own connections (its application
 *     name, which anyone can set: the conditions below are what count);
 *   - rel is named as Citus names shard "shardid" of a table T of its
 *     schema (T need not be a Citus table yet: its row in
 *     pg_dist_partition is as unseen as the shard's);
 *   - T carries a fence trigger of its own (rows in it were judged when
 *     they were written: those are what Citus copies);
 *   - the current role has the privileges of T's owner (or is a
 *     superuser), and rel is owned by T's owner (Citus gives a shard its
 *     table's owner before it copies rows into it): such a role may
 *     already switch T's fence off (ALTER TABLE ... DISABLE TRIGGER), so
 *     nothing is let in for a role that could not already write unjudged;
 *   - rel is no partition of T (a partition made and written in one
 *     transaction and named like a shard, "events_2", stays fenced).
 *
 * What it guarantees: a row is admitted unjudged only into a relation
 * created in this very transaction (the caller checked rd_createSubid),
 * by a role that could write unjudged into T anyway, and never into T
 * itself or, through a partition, into T's rows.  A role granted only
 * INSERT on T that sets Citus's application name and creates a table named
 * "<T>_<digits>" is judged as any client (and the table would be its own,
 * not a placement of T).
 */
static bool
citus_shard_in_the_making(Relation rel, int64 shardid, Oid fence_fn)
{
	Datum		value;
	Oid			table;
	Oid			owner;

	if (!citus_internal_backend() ||
		catalog_lookup("pg_dist_shard", "pg_dist_shard_shardid_index", "shardid",
					   Int64GetDatum(shardid), true, "logicalrelid", &value) ||
		citus_is_citus_table(RelationGetRelid(rel)))
		return false;
	table = table_named_by_shard(rel, shardid);
	if (!OidIsValid(table))
		return false;
	owner = fencing_relation_owner(table);
	if (rel->rd_rel->relowner != owner ||
		!has_privs_of_role(GetUserId(), owner) ||
		!table_is_fenced(table, fence_fn))
		return false;
	return !rel->rd_rel->relispartition ||
		!list_member_oid(get_partition_ancestors(RelationGetRelid(rel)), table);
}

bool
citus_shard_filled_by_its_creator(Relation rel, Oid fence_fn)
{
	int64		shardid;
	Oid			table;
	const char *table_name;
	char	   *shard_name;

	if (rel->rd_createSubid == InvalidSubTransactionId)
		return false;
	shardid = name_shard_id(RelationGetRelationName(rel));
	if (shardid <= 0 || !citus_installed())
		return false;
	/*
	 * A shard in Citus's metadata, named after its table: a partition named
	 * "events_2025" made in this transaction is no shard of anything
	 */
	table = citus_shard_table_uncached(rel);
	if (!OidIsValid(table))
		return citus_shard_in_the_making(rel, shardid, fence_fn);
	table_name = get_rel_name(table);
	if (table_name == NULL)
		return false;
	shard_name = psprintf("%s_" INT64_FORMAT, table_name, shardid);
	/* (Citus shortens a name too long, with a hash: then the metadata decides) */
	return strlen(shard_name) >= NAMEDATALEN ||
		strcmp(shard_name, RelationGetRelationName(rel)) == 0;
}

Oid
citus_new_shard_table(Relation rel)
{
	const char *name = RelationGetRelationName(rel);
	int64		shardid = name_shard_id(name);
	Oid			table;
	Oid			catoid;
	AttrNumber	relatt;
	Relation	catrel;
	SysScanDesc scan;
	HeapTuple	tuple;
	char	   *prefix;

	if (shardid <= 0 || !citus_installed() || citus_is_citus_table(RelationGetRelid(rel)))
		return InvalidOid;
	/* a shard move's or copy's new placement: the metadata knows the shard */
	table = citus_shard_table_uncached(rel);
	if (OidIsValid(table))
		return named_as_shard_of(rel, table, shardid) ? table : InvalidOid;
	/*
	 * A split's child, created by Citus's own connection (a table a client
	 * names "events_2025" beside a Citus table "events" is its own):
	 * "<table>_<shard id>" first
	 */
	if (!citus_internal_backend())
		return InvalidOid;
	prefix = pnstrdup(name, strrchr(name, '_') - name);
	table = get_relname_relid(prefix, RelationGetNamespace(rel));
	if (named_as_shard_of(rel, table, shardid))
		return table;
	/* or a long name Citus shortened: every Citus table of the schema */
	catoid = citus_catalog("pg_dist_partition");
	if (!OidIsValid(catoid) ||
		(relatt = get_attnum(catoid, "logicalrelid")) == InvalidAttrNumber)
		return InvalidOid;
	table = InvalidOid;
	catrel = table_open(catoid, AccessShareLock);
	scan = systable_beginscan(catrel, InvalidOid, false, NULL, 0, NULL);
	while (!OidIsValid(table) && HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		value = heap_getattr(tuple, relatt, RelationGetDescr(catrel), &isnull);

		if (!isnull && get_rel_namespace(DatumGetObjectId(value)) == RelationGetNamespace(rel) &&
			named_as_shard_of(rel, DatumGetObjectId(value), shardid))
			table = DatumGetObjectId(value);
	}
	systable_endscan(scan);
	table_close(catrel, AccessShareLock);
	return table;
}

bool
citus_internal_backend(void)
{
	static const char prefix[] = "citus_internal gpid=";
	const char *name = GetConfigOption("application_name", true, false);

	return name != NULL && strncmp(name, prefix, sizeof(prefix) - 1) == 0;
}
