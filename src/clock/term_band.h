/*-------------------------------------------------------------------------
 *
 * term_band.h
 *	  Terms carry the timeline: each timeline issues terms in its own band.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TERM_BAND_H
#define TERM_BAND_H

#include "fencing.h"

/*
 * A term is a bigint split as 1 sign bit (always 0), 23 bits of timeline
 * and 40 bits of counter: the terms of timeline T are at least
 * (T - 1) * 2^40 and stay below T * 2^40 while fewer than 2^40 terms are
 * issued on it.  Timeline 1 starts at 0, so terms issued before 1.2 (all on
 * one timeline, or below 2^40) keep their place.
 */
#define TERM_BAND_COUNTER_BITS	40
#define TERM_BAND_MAX_TIMELINE	((int64) 1 << (63 - TERM_BAND_COUNTER_BITS))

/* The timeline this server writes WAL on (replays, on a standby). */
extern int64 term_band_timeline(void);

/* The lowest term of timeline "tli", and the first term above its band. */
extern int64 term_band_floor(int64 tli);
extern int64 term_band_limit(int64 tli);

#endif							/* TERM_BAND_H */
