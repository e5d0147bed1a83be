/*-------------------------------------------------------------------------
 *
 * scope_mark.h
 *	  The per-scope high-water mark: locking, reading, raising, resetting.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SCOPE_MARK_H
#define SCOPE_MARK_H

#include "fencing.h"

/* fencing_require_durable_commit(), which every raise calls */
#include "access/htup.h"
#include "utils/relcache.h"

#include "durability/durable_commit.h"
#include "security/scope_acl.h"

/* The mark of a scope nobody has written to yet: every token is above it. */
#define SCOPE_MARK_NONE		((int64) -1)

/* Called by end_of_xact.c, in its order. */
extern void scope_mark_at_xact_end(void);
extern void scope_mark_before_prepare(void);
extern void scope_mark_at_subxact_abort(SubTransactionId mySubid);

/*
 * A write carrying "token" to "scope", in two steps, so that a row checked
 * against several marks (an UPDATE moving it to another scope, the row's own
 * token) raises none of them unless it passes all:
 *
 *   scope_mark_check()   locks the scope (share at the mark, exclusive above
 *                        it) and compares: true when token >= mark; *mark
 *                        gets the mark.  A stale write gives back the lock it
 *                        took, unless a write was admitted under it.
 *   scope_mark_confirm() the write goes ahead: raises the mark to token if
 *                        higher; the lock is then held until the transaction
 *                        ends.
 *   scope_mark_abandon() the write does not go ahead (another check failed):
 *                        gives back the lock if nothing was admitted under it.
 *
 * A hold stays valid until the transaction ends.
 *
 * scope_mark_admit() is check and confirm together.  rel: the table written
 * (NULL: none, takeover()), which a rejection raised here (ZF003) names.
 * bound: the scope comes from rel's scope column, so rel's owner must hold
 * the write privilege on it before this transaction first locks it
 * (security/scope_acl.c).
 */
typedef struct ScopeHold ScopeHold;	/* the transaction's hold on a scope */

extern bool scope_mark_check(const char *scope, int64 token, int64 *mark,
							 ScopeHold **hold, Relation rel, bool bound);
extern void scope_mark_confirm(ScopeHold *hold, int64 token, Relation rel);
extern void scope_mark_abandon(ScopeHold *hold);
extern bool scope_mark_admit(const char *scope, int64 token, int64 *mark,
							 Relation rel, bool bound);

/*
 * INSERT ... ON CONFLICT fires BEFORE INSERT for rows it may not write:
 * scope_mark_defer() keeps the exclusive lock without raising, and the AFTER
 * INSERT trigger, which fires only for rows written, raises the mark with
 * scope_mark_raise_deferred().  fencing.raise_pending() says whether this
 * transaction deferred any raise (the AFTER trigger's WHEN condition).
 * scope_mark_statement_done(), at the end of the statement (after its AFTER
 * triggers), gives back the locks that no written row confirmed.
 */
extern bool scope_mark_admits_without_raise(const ScopeHold *hold, int64 token);
extern void scope_mark_defer(ScopeHold *hold, const void *statement);
extern void scope_mark_statement_done(const void *statement);
extern bool scope_mark_raise_deferred(const char *scope, int64 token, Relation rel);

/*
 * Lock the scope exclusively (waiting for every in-flight writer of the
 * scope to finish) and return its current mark, for callers that then set
 * the mark themselves and report it with scope_mark_remember().  A missing
 * scope is created first, owned by the user, as "missing" says (the caller
 * checked that the user may create scopes): its mark is then none; one that
 * another transaction created meanwhile is first checked for the user's
 * privilege "priv" (the caller checked it on a missing scope); with
 * SCOPE_MISSING_OK it is left alone and nothing is locked.  With row, also
 * the scope's row of fencing.scopes as read under the lock (a copy, or NULL
 * for a missing scope).
 */
/*
 * A scope's committed mark (SCOPE_MARK_NONE when unknown), read without a
 * lock, and its id (0 when unknown or locked by its name's hash).
 */
extern int64 scope_mark_committed(const char *scope, int64 *scope_id);

extern int64 scope_mark_lock_exclusive(const char *scope, ScopeMissing missing,
									   ScopePrivilege priv, HeapTuple *row);

/*
 * The id the scope is locked by (leases/lease.c locks its lease by it too),
 * 0 for a missing scope; one is created first, as scope_mark_lock_exclusive()
 * does, when "missing" says to create it.
 */
extern int64 scope_mark_scope_id(const char *scope, ScopeMissing missing,
								 ScopePrivilege priv);
extern void scope_mark_remember(const char *scope, int64 mark);

/*
 * Set the mark of a scope this transaction holds exclusively (any value: the
 * caller decided), remember it, and make the commit durable.
 */
extern void scope_mark_store(const char *scope, int64 mark);

#endif							/* SCOPE_MARK_H */
