/*-------------------------------------------------------------------------
 *
 * scope_rows.h
 *	  Every write of a row of fencing.scopes, the registry of scopes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SCOPE_ROWS_H
#define SCOPE_ROWS_H

#include "fencing.h"

#include "access/htup.h"
#include "datatype/timestamp.h"
#include "utils/relcache.h"

/*
 * Insert the row of a new scope (mark 0, owned by "owner"); false if it
 * exists already.  A concurrent creator's row in flight is waited for.
 */
extern bool scope_rows_create(const char *scope, Oid owner, bool issued);

/*
 * Delete the row this transaction just created for a write that did not
 * happen after all (other creators wait for this transaction on the row's
 * name, so it is still this transaction's row).
 */
extern void scope_rows_remove_created(const char *scope);

/*
 * Set the mark of a scope this transaction holds exclusively: to "mark", or,
 * with raise_only, to "mark" only if that is higher.
 */
extern void scope_rows_set_mark(const char *scope, int64 mark, bool raise_only);

/*
 * A new term is the scope's mark and latest term: "row" is the scope's row
 * as read under its exclusive lock (NULL: read it again), "scopes" the open
 * registry.
 */
extern void scope_rows_set_term(Relation scopes, const char *scope, HeapTuple row,
								int64 epoch, Datum holder, TimestampTz now);

extern void scope_rows_set_owner(const char *scope, Oid owner);
extern void scope_rows_set_tokens(const char *scope, bool issued);

/*
 * The messages that make every backend forget what it cached of a scope
 * (marks/mark_cache.c receives them), sent when this transaction commits:
 * for one scope whose row is written (each function above sends its own),
 * or for the whole registry.
 */
extern void scope_rows_invalidate(const char *scope);
extern void scope_rows_invalidate_all(void);

/* Called by end_of_xact.c, in its order. */
extern void scope_rows_at_xact_end(void);

#endif							/* SCOPE_ROWS_H */
