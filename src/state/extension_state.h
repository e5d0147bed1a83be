/*-------------------------------------------------------------------------
 *
 * extension_state.h
 *	  Where the extension's durable state lives, and how C code reaches it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef EXTENSION_STATE_H
#define EXTENSION_STATE_H

#include "fencing.h"

#include "executor/spi.h"

/* Columns of fencing.scopes that C code reads directly (see the SQL script). */
#define Anum_scopes_scope		1
#define Anum_scopes_mark		2

/* OIDs of the extension's objects, looked up once per backend. */
extern Oid	fencing_scopes_relid(void);
extern Oid	fencing_scopes_relid_if_known(void);
extern Oid	fencing_scopes_pkey_relid(void);
extern Oid	fencing_epoch_seq_relid(void);

/*
 * Ordinary roles cannot write the extension's tables; the C code does so on
 * their behalf, as the role that owns them.
 */
typedef struct FencingUserContext
{
	Oid			saved_userid;
	int			saved_sec_context;
} FencingUserContext;

extern void fencing_become_owner(FencingUserContext *ctx);
extern void fencing_restore_user(const FencingUserContext *ctx);

/* A saved SPI plan for a fixed statement of ours; caller must be connected. */
extern SPIPlanPtr fencing_saved_plan(SPIPlanPtr *slot, const char *sql,
									 int nargs, Oid *argtypes);

/*
 * Our fixed statements, run as the owner with a fresh snapshot: connect,
 * execute (saved plans; an SPI result code), finish; or all three at once
 * for a write, returning the rows it touched.
 */
extern void fencing_spi_connect_as_owner(FencingUserContext *uctx);
extern int	fencing_spi_execute(SPIPlanPtr *slot, const char *sql, int nargs,
								Oid *argtypes, Datum *values, bool read_only);
extern void fencing_spi_finish_as_owner(const FencingUserContext *uctx);
extern uint64 fencing_execute_as_owner(SPIPlanPtr *slot, const char *sql, int nargs,
									   Oid *argtypes, Datum *values);

#endif							/* EXTENSION_STATE_H */
