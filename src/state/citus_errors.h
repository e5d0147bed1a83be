/*-------------------------------------------------------------------------
 *
 * citus_errors.h
 *	  A fence's rejection keeps its SQLSTATE through Citus's COPY path
 *	  (emit_log_hook; see citus_errors.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef CITUS_ERRORS_H
#define CITUS_ERRORS_H

#include "fencing.h"

extern void citus_errors_init(void);

#endif							/* CITUS_ERRORS_H */
