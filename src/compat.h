/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  The server API differences between the PostgreSQL versions fencing
 *	  is built for (tested on 15, 17 and 18), in one place.
 *
 * Each difference is a macro with the newest server's name and meaning,
 * defined here for the older servers, so that the modules are written once
 * against one API.  Included by fencing.h: every module sees it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCING_COMPAT_H
#define FENCING_COMPAT_H

#include "postgres.h"

#include "utils/acl.h"
#include "utils/guc.h"

#if PG_VERSION_NUM < 150000
#error "fencing needs PostgreSQL 15 or later"
#endif

/*
 * 16 gave memberships the INHERIT and SET options: a member may SET ROLE to
 * the role only WITH SET (an ADMIN-only membership, which CREATEROLE gives a
 * role's creator, has neither).  Before 16 every member may.
 */
#if PG_VERSION_NUM < 160000
#define member_can_set_role(member, role) is_member_of_role((member), (role))
#endif

/* 17 moved a backend's local transaction id into MyProc->vxid. */
#if PG_VERSION_NUM >= 170000
#define FENCING_MY_LXID (MyProc->vxid.lxid)
#else
#define FENCING_MY_LXID (MyProc->lxid)
#endif

/*
 * The local transaction id a PGPROC runs now, and this backend's index
 * among the PGPROCs (GetPGProcByNumber()): 17 made that index the
 * backend's ProcNumber, which a VirtualTransactionId carries.
 */
#if PG_VERSION_NUM >= 170000
#define FENCING_PROC_LXID(proc) ((proc)->vxid.lxid)
#define FENCING_MY_PROCNO MyProcNumber
#else
#define FENCING_PROC_LXID(proc) ((proc)->lxid)
#define FENCING_MY_PROCNO (MyProc->pgprocno)
#endif

/*
 * 18 marks functions that do not return with pg_noreturn, written before
 * the declaration; older servers had pg_attribute_noreturn(), which GCC and
 * Clang accept there too.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * 17 gave LockHeldByMe() an "or stronger" argument: FENCING_LOCK_HELD_ANY()
 * asks whether this backend holds a lock of any mode on a lock tag.
 */
#if PG_VERSION_NUM >= 170000
#define FENCING_LOCK_HELD_ANY(tag) LockHeldByMe((tag), AccessShareLock, true)
#else
#define FENCING_LOCK_HELD_ANY(tag) \
	(LockHeldByMe((tag), AccessShareLock) || LockHeldByMe((tag), RowShareLock) || \
	 LockHeldByMe((tag), RowExclusiveLock) || LockHeldByMe((tag), ShareUpdateExclusiveLock) || \
	 LockHeldByMe((tag), ShareLock) || LockHeldByMe((tag), ShareRowExclusiveLock) || \
	 LockHeldByMe((tag), ExclusiveLock) || LockHeldByMe((tag), AccessExclusiveLock))
#endif

/* 16 replaced pg_proc_aclcheck() and its kind by object_aclcheck(). */
#if PG_VERSION_NUM >= 160000
#include "catalog/pg_proc.h"
#define pg_proc_aclcheck(proc_oid, roleid, mode) \
	object_aclcheck(ProcedureRelationId, (proc_oid), (roleid), (mode))
#endif

/*
 * A GUC check hook's "extra": the server frees it with free() up to 15 and
 * with guc_free() from 16 on, which wants memory from guc_malloc() (a
 * malloc'ed block makes it fail with "pfree called with invalid pointer",
 * at commit, and the server PANICs).  NULL when out of memory.
 */
#if PG_VERSION_NUM >= 160000
#define fencing_guc_extra_alloc(size) guc_malloc(LOG, (size))
#else
#define fencing_guc_extra_alloc(size) malloc(size)
#endif

/*
 * ExecutorRun_hook lost its execute_once parameter in 18: a hook is
 * declared with FENCING_EXECUTORRUN_PARAMS and passes
 * FENCING_EXECUTORRUN_ARGS on (to the previous hook or the standard one).
 */
#if PG_VERSION_NUM >= 180000
#define FENCING_EXECUTORRUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count
#define FENCING_EXECUTORRUN_ARGS queryDesc, direction, count
#else
#define FENCING_EXECUTORRUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count, bool execute_once
#define FENCING_EXECUTORRUN_ARGS queryDesc, direction, count, execute_once
#endif

/*
 * heap_update() reports which indexes need new entries from 16 on (an
 * extra out parameter); the extension inserts its index entries itself
 * and does not need it.
 */
#if PG_VERSION_NUM >= 160000
#define fencing_heap_update(rel, otid, newtup, cid, crosscheck, wait, tmfd, lockmode) \
	({ TU_UpdateIndexes update_indexes_; \
	   heap_update((rel), (otid), (newtup), (cid), (crosscheck), (wait), (tmfd), (lockmode), \
				   &update_indexes_); })
#else
#define fencing_heap_update(rel, otid, newtup, cid, crosscheck, wait, tmfd, lockmode) \
	heap_update((rel), (otid), (newtup), (cid), (crosscheck), (wait), (tmfd), (lockmode))
#endif

#endif							/* FENCING_COMPAT_H */
