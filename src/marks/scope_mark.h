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

/* The mark of a scope nobody has written to yet: every token is above it. */
#define SCOPE_MARK_NONE		((int64) -1)

extern void scope_mark_init(void);

/*
 * Admit a write carrying "token" to "scope": true when token >= mark (the
 * mark is raised to token if lower), false when stale; *mark gets the mark.
 * On return the transaction holds the scope lock until it ends.
 */
extern bool scope_mark_admit(const char *scope, int64 token, int64 *mark);

/*
 * Lock the scope exclusively (waiting for every in-flight writer of the
 * scope to finish) and return its current mark, for callers that then set
 * the mark themselves and report it with scope_mark_remember().
 */
extern int64 scope_mark_lock_exclusive(const char *scope);
extern void scope_mark_remember(const char *scope, int64 mark);

/* Make the current transaction's commit durable, whatever the session set. */
extern void fencing_require_durable_commit(void);

#endif							/* SCOPE_MARK_H */
