/*-------------------------------------------------------------------------
 *
 * fencing.c
 *	  Module entry point of the fencing extension: reserves the "fencing."
 *	  settings prefix and initialises each module, nothing else.  The
 *	  folders under src/ are layers (fencing.h says which).
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "utils/guc.h"

#include "end_of_xact.h"
#include "relcache_watch.h"
#include "clock/term_retention.h"
#include "clock/clock_generation.h"
#include "marks/mark_cache.h"
#include "security/bypass.h"
#include "state/citus_errors.h"
#include "state/citus_shards.h"
#include "telemetry/fence_stats.h"
#include "tokens/declared_token.h"
#include "trigger/fence_config.h"
#include "trigger/running_statement.h"

PG_MODULE_MAGIC;

extern PGDLLEXPORT void _PG_init(void);

void
_PG_init(void)
{
	bypass_init();
	shared_marks_init();
	/* settings before the prefix is reserved, which drops placeholders */
	fence_stats_init();
	declared_token_init();
	term_retention_init();
	clock_generation_init();
	citus_shards_init();

	MarkGUCPrefixReserved("fencing");

	end_of_xact_init();
	relcache_watch_init();
	citus_errors_init();
	fence_config_init();
	running_statement_init();
}
