/*-------------------------------------------------------------------------
 *
 * epoch_clock.c
 *	  fence_next_epoch(): issues a new term for a scope on leader takeover.
 *
 * The clock is the sequence fencing.epoch_seq.  A bare nextval() is not
 * enough: it WAL-logs only every 32 values and never flushes, so a value
 * handed out by a transaction that writes nothing else can be handed out
 * again after a crash.  Each term is therefore recorded in fencing.terms by
 * the issuing transaction, whose commit is forced to be flushed (and to wait
 * for a synchronous standby) whatever synchronous_commit the session has.
 *
 * The issuing transaction holds the scope lock exclusively, so the new mark
 * waits for in-flight writers of the scope and fences the old leader the
 * moment it commits.  A scope whose mark external tokens pushed beyond the
 * clock moves the clock forward first (under a clock lock, so the sequence
 * never moves backwards) and the new term is still above the mark.
 *
 *-------------------------------------------------------------------------
 */
#include "fencing.h"

#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

#include "marks/scope_mark.h"
#include "state/extension_state.h"

#define FENCING_LOCKTAG_CLOCK	0xFE02

/*
 * Next value of the clock that is above "floor".  nextval() runs under the
 * clock lock in share mode; moving the sequence forward with setval() needs
 * it exclusively, so no nextval() can slip in between and be overtaken.
 */
static int64
clock_next_above(int64 floor)
{
	Oid			seq = fencing_epoch_seq_relid();
	LOCKTAG		tag;
	int64		value;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, 0, FENCING_LOCKTAG_CLOCK);

	(void) LockAcquire(&tag, ShareLock, false, false);
	value = nextval_internal(seq, false);
	LockRelease(&tag, ShareLock, false);
	if (value > floor)
		return value;

	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	value = nextval_internal(seq, false);
	if (value <= floor)
	{
		FencingUserContext uctx;

		fencing_become_owner(&uctx);
		DirectFunctionCall2(setval_oid, ObjectIdGetDatum(seq), Int64GetDatum(floor));
		fencing_restore_user(&uctx);
		value = nextval_internal(seq, false);
	}
	LockRelease(&tag, ExclusiveLock, false);
	return value;
}

static void
record_term(const char *scope, int64 epoch, const char *holder)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"WITH term AS ("
		"  INSERT INTO fencing.terms (epoch, scope, holder, issued_by)"
		"  VALUES ($2, $1, $3, $4) RETURNING epoch, scope, holder, issued_at)"
		"INSERT INTO fencing.scopes AS s"
		"  (scope, mark, epoch, holder, epoch_issued_at, terms_issued)"
		"  SELECT scope, epoch, epoch, holder, issued_at, 1 FROM term "
		"ON CONFLICT (scope) DO UPDATE SET"
		"  mark = excluded.mark, mark_raised_at = excluded.epoch_issued_at,"
		"  epoch = excluded.epoch, holder = excluded.holder,"
		"  epoch_issued_at = excluded.epoch_issued_at,"
		"  terms_issued = s.terms_issued OPERATOR(pg_catalog.+) 1";
	Oid			argtypes[4] = {TEXTOID, INT8OID, TEXTOID, NAMEOID};
	Datum		values[4];
	NameData	issued_by;

	/* the caller, also when called from a SECURITY DEFINER function of ours */
	namestrcpy(&issued_by, GetUserNameFromId(GetOuterUserId(), false));
	values[0] = CStringGetTextDatum(scope);
	values[1] = Int64GetDatum(epoch);
	values[2] = CStringGetTextDatum(holder);
	values[3] = NameGetDatum(&issued_by);

	fencing_insert_as_owner(&plan, sql, 4, argtypes, values);
}

/* fence_next_epoch(scope text, holder text DEFAULT NULL) returns bigint */
PG_FUNCTION_INFO_V1(fence_next_epoch);

Datum
fence_next_epoch(PG_FUNCTION_ARGS)
{
	char	   *scope;
	char	   *holder;
	int64		mark;
	int64		epoch;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("fencing scope name must not be null")));
	scope = text_to_cstring(PG_GETARG_TEXT_PP(0));
	fencing_check_scope_name(scope);

	if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
	{
		holder = text_to_cstring(PG_GETARG_TEXT_PP(1));
		fencing_check_holder(holder);
	}
	else
		holder = GetUserNameFromId(GetOuterUserId(), false);

	/* waits for every in-flight writer of the scope */
	mark = scope_mark_lock_exclusive(scope);
	epoch = clock_next_above(mark);
	record_term(scope, epoch, holder);
	scope_mark_remember(scope, epoch);
	fencing_require_durable_commit();

	PG_RETURN_INT64(epoch);
}
