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
 * A value SET before the library was loaded is a placeholder, which Postgres
 * applies when the library defines the setting, in whatever transaction
 * loads it: a later one, maybe another client's behind a pooler, that would
 * be stamped as if it had turned the switch on.  Any value present when the
 * setting is defined is therefore ignored, with a WARNING: the switch must
 * be turned on after the library is loaded (SET LOCAL, in the transaction
 * that uses it).  Who may turn it on is Postgres's check of the setting
 * (PGC_SUSET): superusers and roles granted SET on it, in that transaction
 * only, like a superuser.
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

/* bypass_init() is defining the setting: values seen now were placeholders */
static bool bypass_defining = false;

static bool
bypass_check(bool *newval, void **extra, GucSource source)
{
	BypassExtra *e = fencing_guc_extra_alloc(sizeof(BypassExtra));

	if (e == NULL)
		return false;
	e->lxid = InvalidLocalTransactionId;
	if (*newval && bypass_defining && source == PGC_S_SESSION)
	{
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("\"fencing.bypass\" set before the fencing library was loaded is ignored"),
				 errdetail("The value would take effect only now, in a later statement or transaction than the one that set it."),
				 errhint("Turn it on after the library is loaded, in the transaction that needs it: SET LOCAL fencing.bypass = on.")));
		*newval = false;
	}
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

static void
define_bypass(void)
{
	DefineCustomBoolVariable("fencing.bypass",
							 "Lets writes to protected tables through without any fencing check, in this transaction.",
							 "Only superusers, or roles granted SET on this parameter, can change it. "
							 "It acts only in the transaction that turned it on (SET or SET LOCAL); "
							 "a value from the configuration file, ALTER ROLE or ALTER DATABASE, or an "
							 "earlier transaction, or a value SET before the library was loaded, does nothing. "
							 "Marks are not raised while it acts.",
							 &bypass_value,
							 false,
							 PGC_SUSET,
							 0,
							 bypass_check, bypass_assign, NULL);
}

void
bypass_init(void)
{
	bypass_defining = true;
	PG_TRY();
	{
		define_bypass();
	}
	PG_FINALLY();
	{
		bypass_defining = false;
	}
	PG_END_TRY();
}

bool
fencing_bypass_active(void)
{
	return bypass_value &&
		bypass_lxid != InvalidLocalTransactionId &&
		MyProc != NULL &&
		bypass_lxid == FENCING_MY_LXID;
}
