/*-------------------------------------------------------------------------
 *
 * restored_fence.h
 *	  A fence restored without the extension's data moves the epoch clock
 *	  above the tokens its rows carry (restored_fence.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RESTORED_FENCE_H
#define RESTORED_FENCE_H

#include "fencing.h"

/* From the event trigger after CREATE TRIGGER: the fence's row triggers made by hand. */
extern void restored_fences_note(void);

/* A row's token written unchecked under session_replication_role = replica. */
extern void restored_fence_note_token(int64 token);

/* The transaction or a subtransaction rolled back: forget what its claims covered. */
extern void restored_fence_at_abort(void);

#endif							/* RESTORED_FENCE_H */
