/*-------------------------------------------------------------------------
 *
 * clock_generation.h
 *	  The clock's generation: which band of terms this server issues in.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLOCK_GENERATION_H
#define CLOCK_GENERATION_H

#include "fencing.h"

#include "clock/term_band.h"

/*
 * The generation the next term of this transaction is issued in, on
 * timeline tli.  When this server is not the one that claimed the clock
 * (another system identifier, database or clock table, a lower timeline) the
 * generation moves above every band used, in this transaction, which must
 * then commit durably; with fencing.clock_unclean_start = 'confirm' and the
 * clock not confirmed since an unclean start, ZF006.  0 without the table
 * (SQL older than 1.5).
 */
extern TermBand clock_band_for_issue(int64 tli);

/* The generation the next term would be issued in, read only. */
extern TermBand clock_band_peek(int64 tli);

/*
 * The band whose floor fencing lifts older terms' marks to: the band of the
 * next term, claimed now (durably, as by a term) when that term would move
 * the clock, whose floor would otherwise go on moving with the time.
 */
extern TermBand clock_band_for_fencing(int64 tli);

extern int64 clock_note_unknown_terms(int64 token, const char *scope, int64 *covered);

/* Settings, and what the server's start tells (shared_preload_libraries). */
extern void clock_generation_init(void);

#endif							/* CLOCK_GENERATION_H */
