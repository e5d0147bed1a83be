/*-------------------------------------------------------------------------
 *
 * bypass.h
 *	  fencing.bypass: a maintenance switch that lasts one transaction.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FENCING_BYPASS_H
#define FENCING_BYPASS_H

#include "fencing.h"

extern void bypass_init(void);

/*
 * Whether the fence trigger lets writes through: fencing.bypass is on and
 * was turned on by SET, SET LOCAL or set_config() in this very transaction.
 */
extern bool fencing_bypass_active(void);

#endif							/* FENCING_BYPASS_H */
