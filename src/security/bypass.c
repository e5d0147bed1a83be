/*-------------------------------------------------------------------------
 *
 * bypass.c
 *	  fencing.bypass: a maintenance switch that lasts one transaction.
 *
 * A session-level setting outlives the transaction that made it: behind a
 * pooler in transaction mode, a maintenance session's "SET fencing.bypass =
 * on" would let the next client's tokenless writes through.  So the switch
 * acts only in the transaction that turned it on.  The check hook sees the
 * source of every new value and records, in the value's "extra", the local
 * transaction that SET it (none for postgresql.conf, ALTER ROLE/DATABASE
 * SET, connection options); Postgres hands that extra back to the assign
 * hook whenever the value becomes current again, also when a SET LOCAL or a
 * function's SET clause is undone, so the value in force always carries the
 * transaction it was set in.
 *
 *-------------------------------------------------------------------------
 */
#include "security/bypass.h"

#include <stdlib.h>

#include "access/xact.h"
#include "storage/proc.h"
#include "utils/guc.h"

typedef struct BypassExtra
{
	LocalTransactionId lxid;	/* transaction that SET it, or invalid */
} BypassExtra;

static bool bypass_value = false;
static LocalTransactionId bypass_lxid = InvalidLocalTransactionId;

static bool
bypass_check(bool *newval, void **extra, GucSource source)
{
	BypassExtra *e = fencing_guc_extra_alloc(sizeof(BypassExtra));

	if (e == NULL)
		return false;
	e->lxid = InvalidLocalTransactionId;
	if (*newval && source == PGC_S_SESSION && IsTransactionState() && MyProc != NULL)
		e->lxid = FENCING_MY_LXID;
	*extra = e;
	return true;
}

static void
bypass_assign(bool newval, void *extra)
{
	bypass_lxid = extra != NULL ? ((BypassExtra *) extra)->lxid : InvalidLocalTransactionId;
}

void
bypass_init(void)
{
	DefineCustomBoolVariable("fencing.bypass",
							 "Lets writes to protected tables through without any fencing check, in this transaction.",
							 "Only superusers, or roles granted SET on this parameter, can change it. "
							 "It acts only in the transaction that turned it on (SET or SET LOCAL); "
							 "a value from the configuration file, ALTER ROLE or ALTER DATABASE, or an "
							 "earlier transaction does nothing. Marks are not raised while it acts.",
							 &bypass_value,
							 false,
							 PGC_SUSET,
							 0,
							 bypass_check, bypass_assign, NULL);
}

bool
fencing_bypass_active(void)
{
	return bypass_value &&
		bypass_lxid != InvalidLocalTransactionId &&
		MyProc != NULL &&
		bypass_lxid == FENCING_MY_LXID;
}
