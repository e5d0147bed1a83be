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

#include "access/transam.h"
#include "common/hashfn.h"

HTAB *
fencing_scope_hash_create(const char *name, Size entrysize, MemoryContext cxt)
{
	HASHCTL		ctl;

	ctl.keysize = FENCING_SCOPE_MAX_LEN + 1;
	ctl.entrysize = entrysize;
	ctl.hcxt = cxt;
	return hash_create(name, 64, &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

uint32
scope_hash(const char *scope)
{
	/* string_hash() of a name shorter than the tables' key size */
	return hash_bytes((const unsigned char *) scope, (int) strlen(scope));
}

Oid
scope_inval_id_of_hash(uint32 hash)
{
	return (Oid) (FirstNormalObjectId + hash % ((uint32) PG_UINT32_MAX - FirstNormalObjectId));
}

Oid
scope_inval_id(const char *scope)
{
	return scope_inval_id_of_hash(scope_hash(scope));
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

void *
scope_table_enter(HTAB **table, const char *name, Size entrysize,
				  MemoryContext cxt, long max, Oid key)
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
	return hash_search(*table, &key, HASH_ENTER, NULL);
}
