/*-------------------------------------------------------------------------
 *
 * scope_binding.h
 *	  Which scopes a table with a scope column may write to.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SCOPE_BINDING_H
#define SCOPE_BINDING_H

#include "fencing.h"

#include "utils/relcache.h"

/*
 * Error out (42501) unless the owner of rel may write to the scope that a
 * row of rel names in its scope column; before the scope is locked.
 */
/* A relation or scope changed (InvalidOid: all); called by relcache_watch.c. */
extern void scope_binding_relcache_changed(Oid relid);

extern void scope_binding_require(Relation rel, const char *scope);

/* The same for the scope a fence trigger names as its fixed scope. */
extern void scope_binding_require_fixed(Relation rel, const char *scope);

/*
 * Moves whenever an answer may have changed (a role, a membership, a grant,
 * a scope's row): an answer obtained at one value holds while it stays.
 */
extern uint64 scope_binding_generation(void);

#endif							/* SCOPE_BINDING_H */
