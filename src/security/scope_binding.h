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
extern void scope_binding_require(Relation rel, const char *scope);

#endif							/* SCOPE_BINDING_H */
