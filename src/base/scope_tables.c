/*-------------------------------------------------------------------------
 *
 * scope_tables.c
 *	  Backend-local hash tables keyed by scope.  Every such table is bounded
 *	  by its caller (scope_table_enter empties it rather than grow it past
 *	  its maximum), and lives in a memory context the caller chooses.
 *
 *-------------------------------------------------------------------------
 */
#include "base/scope_tables.h"

HTAB *
fencing_scope_hash_create(const char *name, Size entrysize, MemoryContext cxt)
{
	HASHCTL		ctl;

	ctl.keysize = FENCING_SCOPE_MAX_LEN + 1;
	ctl.entrysize = entrysize;
	ctl.hcxt = cxt;
	return hash_create(name, 64, &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

void
scope_table_drop(HTAB **table)
{
	if (*table != NULL)
	{
		hash_destroy(*table);
		*table = NULL;
	}
}

HTAB *
scope_table_ready(HTAB **table, const char *name, Size entrysize,
				  MemoryContext cxt, long max)
{
	if (*table != NULL && hash_get_num_entries(*table) >= max)
		scope_table_drop(table);
	if (*table == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = entrysize;
		ctl.hcxt = cxt;
		*table = hash_create(name, 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	return *table;
}
