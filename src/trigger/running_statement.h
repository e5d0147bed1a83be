/*-------------------------------------------------------------------------
 *
 * running_statement.h
 *	  What the statement that fired the fence trigger is doing, as far as a
 *	  row trigger cannot tell by itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef RUNNING_STATEMENT_H
#define RUNNING_STATEMENT_H

#include "fencing.h"

extern void running_statement_init(void);

/*
 * A number that identifies the innermost statement being executed (each run
 * of the executor gets a new one); 0 outside any.
 */
extern uint64 running_statement_id(void);

/* The running statement's QueryDesc, as an opaque key (NULL outside any). */
extern const void *running_statement_query(void);

/* How the UPDATE actions of a MERGE in the running statement treat a column. */
typedef enum MergeAssigns
{
	MERGE_NONE,					/* no MERGE, or no UPDATE action names it */
	MERGE_ASSIGNS_ALL,			/* every UPDATE action assigns the column */
	MERGE_ASSIGNS_SOME			/* some do, some do not */
} MergeAssigns;

extern MergeAssigns running_statement_merge_assigns(Oid relid, const char *column);

/* Whether the running statement has an INSERT ... ON CONFLICT anywhere. */
extern bool running_statement_has_on_conflict(Oid relid);

#endif							/* RUNNING_STATEMENT_H */
