/*-------------------------------------------------------------------------
 *
 * epoch_clock.h
 *	  Issuing terms: fence_next_epoch() and the lease grants.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EPOCH_CLOCK_H
#define EPOCH_CLOCK_H

#include "fencing.h"

/*
 * The next term of the scope, issued to holder, recorded and made the
 * scope's mark; the current role needs the lead privilege (a missing scope
 * is created for it when it may create scopes).
 */
extern int64 epoch_clock_issue(const char *scope, const char *holder);

#endif							/* EPOCH_CLOCK_H */
