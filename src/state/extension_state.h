/*-------------------------------------------------------------------------
 *
 * extension_state.h
 *	  Where the extension's durable state lives, and how C code reaches it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EXTENSION_STATE_H
#define EXTENSION_STATE_H

#include "fencing.h"

#include "executor/spi.h"

/*
 * Columns of the extension's tables that C code reads or writes directly
 * (src/sql/concepts/).  Their positions are the same in a fresh install and
 * in one upgraded from any version (test 99_upgrade_objects compares them).
 */
#define Anum_scopes_scope			1
#define Anum_scopes_mark			2
#define Anum_scopes_mark_raised_at	3
#define Anum_scopes_epoch			4
#define Anum_scopes_holder			5
#define Anum_scopes_epoch_issued_at	6
#define Anum_scopes_terms_issued	7
#define Natts_scopes_1_1			7	/* before 1.2: no owner, no tokens */
#define Anum_scopes_owner			8
#define Anum_scopes_tokens			9
#define Anum_scopes_id				10	/* 1.4: the id the scope is locked by */

#define Anum_terms_epoch			1
#define Anum_terms_scope			2
#define Anum_terms_holder			3
#define Anum_terms_issued_at		4
#define Anum_terms_issued_by		5
#define Natts_terms					5

#define Anum_leases_scope			1
#define Anum_leases_holder			2
#define Anum_leases_term			3
#define Anum_leases_acquired_at		4
#define Anum_leases_renewed_at		5
#define Anum_leases_expires_at		6
#define Anum_leases_released_at		7
#define Anum_leases_grants			8
#define Natts_leases				8

/* The extension's relations that C code opens; OIDs looked up once per backend. */
typedef enum FencingRelation
{
	FENCING_REL_SCOPES,
	FENCING_REL_SCOPES_PKEY,
	FENCING_REL_EPOCH_SEQ,
	FENCING_REL_TERMS,
	FENCING_REL_LEASES,
	FENCING_REL_LEASES_PKEY,
	FENCING_REL_CLOCK,			/* from 1.5: fencing_clock_relid_if_installed() */
	FENCING_REL_COUNT
} FencingRelation;

extern Oid	fencing_relid(FencingRelation which);
extern Oid	fencing_scopes_relid(void);
extern Oid	fencing_scopes_relid_if_known(void);
extern Oid	fencing_scopes_pkey_relid(void);
extern Oid	fencing_epoch_seq_relid(void);

/*
 * fencing.clock, or InvalidOid when the installed SQL is older than 1.5
 * (its absence is not cached: ALTER EXTENSION UPDATE is seen at once).
 */
extern Oid	fencing_clock_relid_if_installed(void);

/*
 * The installed SQL version, told by the shape of fencing.scopes: the one
 * answer every module asks for (legacy/older_sql.c lists what the older
 * versions still need).  Cached with the relation OIDs, and forgotten with
 * them, so ALTER EXTENSION fencing UPDATE is seen at once.  NONE: the
 * extension is not installed in this database.
 */
typedef enum FencingSql
{
	FENCING_SQL_NONE,
	FENCING_SQL_1_1,			/* 1.0 and 1.1: no owners, grants, token kinds */
	FENCING_SQL_1_2,			/* 1.2 and 1.3: no scope ids */
	FENCING_SQL_1_4				/* the SQL this library installs */
} FencingSql;

extern FencingSql fencing_sql_version(void);

/*
 * What this database's fencing.scopes is now, as the catalog says: its OID,
 * its storage (a TRUNCATE or a rewrite changes it) and its SQL version (an
 * update that adds a column, such as 1.4's ids, changes it).  A mark kept in
 * shared memory was read from one registry and counts only for the same
 * (marks/mark_cache.c): a backend started after DROP/CREATE EXTENSION or
 * ALTER EXTENSION UPDATE computes it from the catalog, and needs no message.
 */
typedef struct FencingRegistry
{
	Oid			relid;			/* InvalidOid: not installed */
	Oid			relfilenode;
	uint32		version;		/* a FencingSql */
} FencingRegistry;

extern void fencing_registry_now(FencingRegistry *registry);

static inline bool
fencing_sql_at_least(FencingSql version)
{
	return fencing_sql_version() >= version;
}

/*
 * Ordinary roles cannot write the extension's tables; the C code does so on
 * their behalf, as the role that owns them.
 */
typedef struct FencingUserContext
{
	Oid			saved_userid;
	int			saved_sec_context;
	int			guc_nestlevel;	/* settings to undo on restore; 0: none */
} FencingUserContext;

extern void fencing_become_owner(FencingUserContext *ctx);
extern void fencing_restore_user(const FencingUserContext *ctx);

/*
 * The other switches of role, here too (test/stages/check_layers lists
 * every caller of these three and fails on a new one):
 *   - to a relation's owner, for DDL about that relation (protect.c), as
 *     Postgres's maintenance commands do: whatever of the relation the DDL
 *     evaluates runs with its owner's rights, never with ours or the
 *     caller's;
 *   - to a role a Citus coordinator fed, to create its scope as that role
 *     (cluster_apply.c).
 */
/* A relation's owner, from the catalog (no lock); 42P01 if it does not exist. */
extern Oid fencing_relation_owner(Oid relid);
extern void fencing_become_relation_owner(Oid relid, FencingUserContext *ctx);
extern void fencing_become_role(Oid role, FencingUserContext *ctx);

/* A saved SPI plan for a fixed statement of ours; caller must be connected. */
extern SPIPlanPtr fencing_saved_plan(SPIPlanPtr *slot, const char *sql,
									 int nargs, Oid *argtypes);

/*
 * Our fixed statements, run as the owner with a fresh snapshot: connect,
 * execute (saved plans; an SPI result code), finish; or all three at once
 * for a write, returning the rows it touched.
 */
extern void fencing_spi_connect_as_owner(FencingUserContext *uctx);
extern int	fencing_spi_execute(SPIPlanPtr *slot, const char *sql, int nargs,
								Oid *argtypes, Datum *values, bool read_only);
extern void fencing_spi_finish_as_owner(const FencingUserContext *uctx);
extern uint64 fencing_execute_as_owner(SPIPlanPtr *slot, const char *sql, int nargs,
									   Oid *argtypes, Datum *values);

/*
 * A relation (or a scope's pseudo-OID; InvalidOid: all) changed: forget the
 * OIDs above and citus_shards.c's caches.  Called by relcache_watch.c.
 */
extern void extension_state_relcache_changed(Oid relid);

#endif							/* EXTENSION_STATE_H */
