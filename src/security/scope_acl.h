/*-------------------------------------------------------------------------
 *
 * scope_acl.h
 *	  Scope owners and privileges: who may issue terms, raise a mark, bind
 *	  a table to a scope, read a scope's rows, and create scopes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SCOPE_ACL_H
#define SCOPE_ACL_H

#include "fencing.h"

#include "executor/spi.h"
#include "utils/relcache.h"

#include "state/extension_state.h"

typedef enum ScopePrivilege
{
	SCOPE_PRIV_READ,			/* see the scope's rows */
	SCOPE_PRIV_WRITE,			/* raise the mark by a write; protect() */
	SCOPE_PRIV_LEAD,			/* issue terms; take, renew, release leases */
	SCOPE_PRIV_OWNER			/* grant, revoke, reset the mark */
} ScopePrivilege;

/* What a check does about a scope that does not exist yet. */
typedef enum ScopeMissing
{
	SCOPE_MISSING_OK,			/* nothing: the call changes nothing then */
	SCOPE_MISSING_MAY_CREATE,	/* the caller must be allowed to create it */
	SCOPE_MISSING_CREATE_ISSUED,	/* create it, owned by the caller, 'issued' */
	SCOPE_MISSING_CREATE_EXTERNAL	/* create it, owned by the caller, 'external' */
} ScopeMissing;

typedef struct ScopeInfo
{
	bool		exists;
	Oid			owner;
	bool		issued;			/* tokens = 'issued' */
	int64		epoch;			/* latest term, or -1 */
	int64		mark;			/* committed mark, or -1 */
} ScopeInfo;


/* The scope's registry row, read by an index scan (no permission checks) with a fresh snapshot. */
extern bool scope_info_read(const char *scope, ScopeInfo *info);

/* The same from a row of fencing.scopes already read (NULL: a missing scope). */
extern void scope_info_from_row(Relation scopes, HeapTuple row, ScopeInfo *info);

extern bool scope_acl_has(const char *scope, const ScopeInfo *info,
						  ScopePrivilege priv, Oid roleid);

/*
 * Error out unless roleid holds priv on the scope; handle a missing scope as
 * told (creating it makes roleid its owner).  Fills *info.  Before 1.2's
 * schema is installed, checks nothing and only makes sure the row exists
 * when told to create it.
 */
extern void scope_acl_require(const char *scope, ScopePrivilege priv, Oid roleid,
							  ScopeMissing missing, ScopeInfo *info);

/* The same with *info already read (scope_info_from_row), under a lock. */
extern void scope_acl_require_known(const char *scope, ScopePrivilege priv, Oid roleid,
									ScopeMissing missing, ScopeInfo *info);

/*
 * The raise path of a write (the trigger): the write privilege (an error
 * without it), and for 'issued' scopes whether the token is a term issued
 * for the scope: false if not, and the caller raises ZF003
 * (telemetry/rejection.c) with *info, the scope as read.  "check" runs
 * before the scope lock is taken exclusively and creates nothing; "admit"
 * runs under it and creates the scope ('external') if missing.
 */
extern bool scope_acl_check_raise(const char *scope, int64 token, ScopeInfo *info);
extern bool scope_acl_admit_raise(const char *scope, int64 token, ScopeInfo *info);
/*
 * Whether scope_acl_check_raise() would pass for a scope that exists, as
 * *info (read without a lock) says, told without an error: for a caller
 * choosing its lock only (the raise is checked, with its errors, when it
 * is admitted).
 */
extern bool scope_acl_may_raise(const char *scope, int64 token, const ScopeInfo *info);

/*
 * The role that offered the token of the write being judged: the role that
 * declared it (fencing.use_token(), tokens/declared_token.c), or the current
 * user for a token in the row's column.  The trigger sets it before it
 * checks a token and puts the previous one back when it returns; an abort
 * clears it.  A raise then needs the write privilege of the offerer as well
 * as of the current user (they differ in a foreign key's cascade, which
 * runs as the referencing table's owner, and in a SECURITY DEFINER
 * function).  scope_acl_offerer(): the offerer, or the current user when
 * none is set.  Returns the previous one (InvalidOid: none).
 */
extern Oid	scope_acl_set_offerer(Oid role);
extern Oid	scope_acl_offerer(void);
/* Called by end_of_xact.c, in its order. */
extern void scope_acl_at_xact_end(void);
extern void scope_acl_at_subxact_abort(void);

/* Whether roleid may see the scope's rows (superusers and pg_monitor: every scope). */
extern bool scope_acl_may_read(const char *scope, Oid roleid);

/* Whether roleid may create scopes (EXECUTE on fencing.create_scope). */
extern bool scope_acl_may_create(Oid roleid);


/* Parse 'lead', 'write', 'read'. */
extern ScopePrivilege scope_privilege_from_name(const char *name);
extern const char *scope_privilege_name(ScopePrivilege priv);

/*
 * Bindings: the scopes a table with a scope column may write to.
 */
/* A relation or scope changed (InvalidOid: all); called by relcache_watch.c. */
extern void scope_binding_relcache_changed(Oid relid);

/*
 * Error out (42501) unless the owner of rel may write to the scope that a
 * row of rel names in its scope column; before the scope is locked.
 */
extern void scope_binding_require(Relation rel, const char *scope);

/* The same for the scope a fence trigger names as its fixed scope. */
extern void scope_binding_require_fixed(Relation rel, const char *scope);

/*
 * Moves whenever an answer may have changed (a role, a membership, a grant,
 * a scope's row): an answer obtained at one value holds while it stays.
 */
extern uint64 scope_binding_generation(void);

#endif							/* SCOPE_ACL_H */
