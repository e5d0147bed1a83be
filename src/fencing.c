/*-------------------------------------------------------------------------
 *
 * fencing.c
 *	  Module entry point of the fencing extension: reserves the "fencing."
 *	  settings prefix and initialises each module, nothing else.  The checks
 *	  every module shares live in checks/.
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "utils/guc.h"

#include "durability/durable_commit.h"
#include "marks/scope_mark.h"
#include "security/bypass.h"
#include "security/scope_acl.h"
#include "telemetry/fence_stats.h"
#include "tokens/declared_token.h"
#include "trigger/fence_config.h"
#include "trigger/running_statement.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	bypass_init();
	/* settings before the prefix is reserved, which drops placeholders */
	fence_stats_init();

	MarkGUCPrefixReserved("fencing");

	durable_commit_init();
	scope_mark_init();
	declared_token_init();
	scope_acl_init();
	fence_config_init();
	running_statement_init();
}
