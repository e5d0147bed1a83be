/*-------------------------------------------------------------------------
 *
 * relcache_watch.h
 *	  Registration of the library's relcache callback (relcache_watch.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef RELCACHE_WATCH_H
#define RELCACHE_WATCH_H

#include "fencing.h"

extern void relcache_watch_init(void);

#endif							/* RELCACHE_WATCH_H */
