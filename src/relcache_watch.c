/*-------------------------------------------------------------------------
 *
 * relcache_watch.c
 *	  The library's one relcache callback: every module's caches hear of a
 *	  changed relation, or of a scope's change, from here.
 *
 * A backend has ten relcache callback slots (PostgreSQL 15), and a full set
 * is a FATAL error in whatever statement registers the eleventh.  Postgres
 * takes one and Citus five, so the library registers one, at load time, and
 * calls each module in a fixed order, from the bottom layer up: the
 * extension's relation OIDs (state/extension_state.c, and Citus's shard
 * names with them), the scope bindings (security/scope_acl.c), the mark
 * cache (marks/mark_cache.c) and the trigger configurations
 * (trigger/fence_config.c).  A scope's change arrives as a relcache message
 * for the scope's pseudo-OID (state/scope_rows.c); InvalidOid means "all".
 *
 * With the library preloaded, the server's own memory (the shared marks,
 * the counters) also hears of a database created here: one created with
 * the OID of a database dropped before (CREATE DATABASE ... OID, or the OID
 * counter come round) must find nothing that server's memory kept for the
 * dropped one, and no message tells its backends.
 *
 *-------------------------------------------------------------------------
 */
#include "relcache_watch.h"

#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "utils/inval.h"

#include "marks/mark_cache.h"
#include "security/scope_acl.h"
#include "state/extension_state.h"
#include "telemetry/fence_stats.h"
#include "trigger/fence_config.h"

static void
relcache_changed(Datum arg, Oid relid)
{
	extension_state_relcache_changed(relid);
	scope_binding_relcache_changed(relid);
	mark_cache_relcache_changed(relid);
	fence_config_relcache_changed(relid);
}

static object_access_hook_type prev_object_access_hook = NULL;

static void
database_created(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_POST_CREATE && classId == DatabaseRelationId)
	{
		shared_marks_database_created();
		fence_stats_database_created(objectId);
	}
}

void
relcache_watch_init(void)
{
	CacheRegisterRelcacheCallback(relcache_changed, (Datum) 0);
	if (process_shared_preload_libraries_in_progress)
	{
		prev_object_access_hook = object_access_hook;
		object_access_hook = database_created;
	}
}
