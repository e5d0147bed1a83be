/*-------------------------------------------------------------------------
 *
 * citus_shards.h
 *	  What Citus's metadata says about a relation and this node, read from
 *	  its catalogs when Citus is installed, without linking to Citus.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CITUS_SHARDS_H
#define CITUS_SHARDS_H

#include "fencing.h"

#include "nodes/pg_list.h"
#include "utils/relcache.h"

extern void citus_shards_init(void);

/* Forget what was cached of relid (InvalidOid: of every relation). */
extern void citus_shards_relcache_invalidate(Oid relid);

/*
 * The distributed (or reference, or Citus-local) table whose shard rel is,
 * as this node's pg_dist_shard says, or InvalidOid: rel is no shard, or
 * Citus is not installed.  Cached per relation until its next relcache
 * invalidation; a relation whose name does not end in "_<digits>" is
 * answered without reading a catalog.
 */
extern Oid	citus_shard_table(Relation rel);

/* citus_shard_table(), read again from the catalogs. */
extern Oid	citus_shard_table_uncached(Relation rel);

/* Whether Citus's catalogs exist in this database (not cached). */
extern bool citus_installed(void);

/* Whether relid is a Citus table (pg_dist_partition has it). */
extern bool citus_is_citus_table(Oid relid);

/*
 * Whether this node is a Citus worker: Citus is installed and its local
 * group (pg_dist_local_group) is not the coordinator's, 0, or the node was
 * recorded as a worker in fencing.node_state when the coordinator fed it
 * (for good: stop_metadata_sync_to_node() makes a worker's group 0).
 * Cached until an invalidation of that catalog or table.
 */
extern bool citus_node_is_worker(void);

/* fencing.node_state: this node's recorded role */
#define NODE_STATE_RELNAME		"node_state"
#define NODE_ROLE_NONE			0
#define NODE_ROLE_COORDINATOR	1
#define NODE_ROLE_WORKER		2
extern int	citus_node_recorded_role(void);
/* fencing.node_state exists (the extension's SQL is 1.5 or later) */
extern bool citus_node_state_exists(void);
extern Oid	citus_node_fed_via(void);

/* Whether it took every scope through it since this server started. */
extern bool citus_node_fed_since_start(void);
extern bool citus_node_looks_coordinator(void);
/*
 * On a worker whose marks the coordinator distributes: NULL while its marks
 * are current (it holds, in Citus's metadata, the placement of
 * fencing.cluster_marks it last took every scope through), else why not.
 * NULL also where the extension's SQL predates fencing.node_state (the
 * library updated, ALTER EXTENSION not yet run): judged as before.
 */
extern const char *citus_node_marks_stale(void);

/*
 * The feed lease (fencing.node_state.lease, lease_from): a write by scope
 * admitted on a worker holding one notes it; such a transaction fails
 * (55000) before it commits or prepares if the lease ran out meanwhile.
 */
extern void citus_node_lease_note_write(void);
extern void citus_node_lease_before_commit(void);
extern void citus_node_lease_at_xact_end(void);

/*
 * Whether rel is a Citus shard (in Citus's metadata, and named
 * "<table>_<shard id>") created in this very transaction: the rows Citus
 * copies into the placements it makes when it distributes a table with
 * rows (create_distributed_table, create_reference_table).  No other
 * transaction can see such a relation until this one commits.  Where the
 * metadata names no shard of its id (the coordinator's own placement,
 * filled through Citus's connection to itself, which cannot see the
 * distributing transaction's metadata): only in Citus's own connection, as
 * a role with the privileges of the owner of the table (fenced by
 * fence_fn) whose shard rel is named as, rel owned by that owner and no
 * partition of that table.
 */
extern bool citus_shard_filled_by_its_creator(Relation rel, Oid fence_fn);

/*
 * Whether relid is a Citus-local table (citus_add_local_table_to_metadata):
 * its one shard is on the coordinator, and Citus keeps TRUNCATE triggers off
 * that shard (the table's own TRUNCATE triggers fire for it).
 */
extern bool citus_is_local_table(Oid relid);

/*
 * The shards of Citus table "table" that this node holds a placement of, as
 * relation OIDs.  A local placement whose relation is not found by Citus's
 * name for it sets *unfound to that name (and NIL is returned): the caller
 * fails closed.
 */
extern List *citus_local_shards(Relation table, char **unfound);

/*
 * Whether this node's pg_dist_placement places shard rel here: false for a
 * shard being copied here by a shard move, until the move commits.
 */
extern bool citus_shard_placed_here(Relation rel);

/*
 * The Citus table a relation just created is a shard of: by this node's
 * pg_dist_shard (the new placement of a shard move or copy), else, in a
 * backend of Citus's own connections, by Citus's name for a shard of a
 * Citus table of its schema (the children of a shard split are in no
 * metadata until the split ends: Citus names a shard "<table>_<shard id>",
 * or shortens a long name with a hash of it).
 * InvalidOid: none, or Citus is not installed.
 */
extern Oid	citus_new_shard_table(Relation rel);

/*
 * Whether this backend serves one of Citus's own connections (application
 * name "citus_internal gpid=...", which Citus gives every connection it
 * opens between nodes, and itself trusts to tell its backends apart).
 */
extern bool citus_internal_backend(void);

/* The name to show for rel: its distributed table's, else its own. */
extern const char *citus_shown_relname(Relation rel);

/* The relation to count rel's events under: its distributed table, else rel. */
extern Oid	citus_shown_relid(Relation rel);

#endif							/* CITUS_SHARDS_H */
