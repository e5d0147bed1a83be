/*-------------------------------------------------------------------------
 *
 * cluster_marks.h
 *	  The marks of a Citus cluster: changed on its coordinator only, and fed
 *	  to every node through fencing.cluster_marks in the changing transaction.
 *
 *-------------------------------------------------------------------------
 */
#ifndef CLUSTER_MARKS_H
#define CLUSTER_MARKS_H

#include "fencing.h"

/* Columns of fencing.cluster_marks (fencing.distribute_marks() creates it). */
#define Anum_cluster_marks_scope	1
#define Anum_cluster_marks_mark		2
#define Anum_cluster_marks_owner	3
#define Anum_cluster_marks_tokens	4
#define Anum_cluster_marks_exact	5
#define Anum_cluster_marks_grants	6
#define Natts_cluster_marks			6

#define CLUSTER_MARKS_RELNAME		"cluster_marks"

/*
 * Whether this database's marks are a cluster's: fencing.cluster_marks
 * exists.  Then no write to a table raises a mark or creates a scope, on any
 * node: marks move by the coordinator's calls only, which reach every node.
 */
extern bool cluster_marks_enabled(void);

/*
 * A change of the scope's row (its mark, term, owner or kind) or of its
 * grants was written
 * on this node: on the coordinator of a cluster, send the row as it now
 * is to every node (exact: a stored mark, which may be lower, rather than
 * a raise); on a worker, refuse the change (only the coordinator changes
 * marks).  Nothing without a cluster, and nothing while applying a fed
 * row.
 */
extern void cluster_marks_feed(const char *scope, bool exact);

/*
 * Refuses (0A000) on a worker of a cluster whose marks are distributed: the
 * change of a scope (a term, a mark) is the coordinator's.  Called before
 * anything else is judged, so that a worker says so first.
 */
extern void cluster_marks_require_coordinator(const char *scope);

/* Brackets the local writes of a fed row (marks/cluster_apply.c). */
extern bool cluster_marks_begin_apply(void);
extern void cluster_marks_end_apply(bool was_applying);

#endif							/* CLUSTER_MARKS_H */
