/*-------------------------------------------------------------------------
 *
 * term_band.h
 *	  Terms carry their band: each timeline of each clock generation issues
 *	  terms in its own band.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TERM_BAND_H
#define TERM_BAND_H

#include "fencing.h"

/*
 * A term is a bigint split as 1 sign bit (always 0), 23 bits of band and 40
 * bits of counter.  Timeline T of clock generation G issues in band
 * G + T - 1: its terms are at least (G + T - 1) * 2^40 and below
 * (G + T) * 2^40, the next timeline's floor (the clock refuses a term at or
 * above it, ZF007, clock/epoch_clock.c).  Generation
 * 0, timeline 1 starts at 0, so terms issued before 1.2 (all on one
 * timeline, or below 2^40) keep their place (clock/clock_generation.c says
 * when the generation moves).  Only fencing.confirm_clock() shifts the
 * bands of a generation by an offset below 2^40: every band of it then
 * starts offset terms later and is still 2^40 wide.
 */
typedef struct TermBand
{
	int64		generation;
	int64		offset;			/* 0 <= offset < 2^40 */
} TermBand;

#define TERM_BAND_COUNTER_BITS	40
#define TERM_BAND_COUNT			((int64) 1 << (63 - TERM_BAND_COUNTER_BITS))

/* The timeline this server writes WAL on (replays, on a standby). */
extern int64 term_band_timeline(void);

/* The band of timeline "tli" in generation "generation"; ZF004 past the last. */
extern int64 term_band_index(int64 tli, int64 generation);

/* Whether timeline "tli" has a band in that generation. */
extern bool term_band_exists(int64 tli, TermBand band);

/* The lowest term of the band of "tli", and the first term above it. */
extern int64 term_band_floor(int64 tli, TermBand band);
extern int64 term_band_limit(int64 tli, TermBand band);

/* The band a term is in. */
static inline int64
term_band_of(int64 term)
{
	return term >> TERM_BAND_COUNTER_BITS;
}

#endif							/* TERM_BAND_H */
