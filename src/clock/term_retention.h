/*-------------------------------------------------------------------------
 *
 * term_retention.h
 *	  fencing.term_retention: old terms of a scope deleted as it issues new
 *	  ones, a bounded number per term.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TERM_RETENTION_H
#define TERM_RETENTION_H

#include "fencing.h"

#include "datatype/timestamp.h"
#include "utils/relcache.h"

extern void term_retention_init(void);

/*
 * Called by the epoch clock under the scope's exclusive lock, after it
 * recorded the term "epoch" (now the scope's mark and latest term) in
 * terms: deletes at most TERM_RETENTION_PER_TERM of the scope's terms
 * older than fencing.term_retention.  Nothing when the setting is off or
 * the installed SQL lacks the index on (scope, issued_at).
 */
extern void term_retention_apply(Relation terms, const char *scope, int64 epoch,
								 TimestampTz now);

#endif							/* TERM_RETENTION_H */
