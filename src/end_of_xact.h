/*-------------------------------------------------------------------------
 *
 * end_of_xact.h
 *	  Registration of the library's transaction callbacks (end_of_xact.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef END_OF_XACT_H
#define END_OF_XACT_H

#include "fencing.h"

extern void end_of_xact_init(void);

#endif							/* END_OF_XACT_H */
