/*-------------------------------------------------------------------------
 *
 * scope_mark.c
 *	  The per-scope high-water mark, kept in fencing.scopes.
 *
 * Concurrency: every writer of a scope holds a lock on the scope until its
 * transaction ends.  Writers whose token equals the mark take it in share
 * mode and never wait for each other; raising the mark takes it exclusively,
 * so a raise waits for every in-flight writer of the scope, and a writer that
 * arrives after the raise committed reads the new mark.  The lock is a
 * heavyweight lock with a tag of our own (an advisory-type tag with a field4
 * that pg_advisory_lock() cannot produce), so waits show up in pg_locks, obey
 * lock_timeout and take part in deadlock detection.  The lock is keyed by the
 * scope's id (fencing.scopes.id), never by its name: only a scope that
 * exists is locked, and only once the caller's right to it was checked; a
 * scope written for the first time is created (by a role allowed to) before
 * it is locked, and two creators meet on the row's unique name.  A transaction that
 * writes many scopes locks the later ones by table (scope_lock.c), so the
 * number of locks it holds stays bounded.
 *
 * Once the lock is held the mark cannot move, so each transaction reads a
 * scope's mark once (with a fresh snapshot: under REPEATABLE READ the
 * transaction snapshot could miss a newer mark) and remembers it until it
 * ends.  With the library preloaded, a writer whose scope's mark is in
 * shared memory takes no lock at all: it registers its transaction there
 * as a writer at the mark, which every raise drains (mark_cache.c), and
 * that stands for the share lock until the transaction ends.  A share lock
 * is never upgraded in place when that can be avoided: a first write whose
 * token is above the mark read without a lock, and that may raise it, is
 * locked exclusively at once (raise_foreseen); one that finds its token
 * above the mark under the share lock gives it back and comes back
 * exclusively.  Each scope is resolved once per transaction into its hold
 * (ScopeHold): what it is locked by, the lock held, the mark read under it.
 *
 *-------------------------------------------------------------------------
 */
#include "base/input_checks.h"
#include "base/scope_tables.h"
#include "marks/scope_mark.h"

#include "access/relation.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "commands/trigger.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "catalog/pg_authid.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"

#include "durability/durable_commit.h"
#include "marks/mark_cache.h"
#include "marks/scope_lock.h"
#include "state/citus_shards.h"
#include "state/cluster_marks.h"
#include "state/scope_rows.h"
#include "security/scope_acl.h"
#include "state/direct_row.h"
#include "state/extension_state.h"
#include "telemetry/rejection.h"

struct ScopeHold
{
	char		scope[FENCING_SCOPE_MAX_LEN + 1];	/* hash key */
	uint64		generation;		/* entry is valid while this is current */
	LOCKMODE	mode;			/* NoLock, ShareLock or ExclusiveLock */
	int64		mark;			/* valid while mode != NoLock */
	bool		fresh;			/* this entry acquired the lock it holds */
	bool		coarse;			/* locked by the table lock (scope_lock.c) */
	bool		registered;		/* the share hold is a registration (mark_cache.c) */
	/* kept across transactions */
	ScopeKey	lock_key;		/* what the scope was last read to be locked by;
								 * id 0: not known */
	uint64		key_epoch;		/* mark_cache_epoch() when it was kept */
	Oid			cache_id;		/* scope_inval_id(), derived once */
	bool		confirmed;		/* a write was admitted under the lock */
	const void *deferred_by;	/* the statement whose raise is deferred, or NULL */
	/* what a subtransaction abort takes back (see scope_mark_at_subxact_abort) */
	SubTransactionId confirmed_subid;	/* first confirmed a write; 0: none */
	SubTransactionId share_subid;	/* took the share lock; 0: not held */
	SubTransactionId excl_subid;	/* took the exclusive lock; 0: not held */
	bool		share_counted;	/* the share lock is one of scope_lock.c's fine locks */
	bool		excl_counted;	/* the exclusive lock is one */
	SubTransactionId mark_subid;	/* changed the mark (a raise, a store); 0: none */
	bool		mark_stale;		/* read the mark again before trusting it */
	SubTransactionId created_subid; /* created the scope's row to lock it; 0: no */
	Oid			bound_relid;	/* the table whose binding to the scope was checked last */
};

/*
 * Scopes this transaction holds a lock on.  The table lives as long as the
 * backend and is emptied in O(1) by moving to a new generation at the end of
 * every transaction (creating a hash table per transaction costs more than
 * the rest of a fenced write).
 */
static HTAB *held_scopes = NULL;
static uint64 held_generation = 1;

/*
 * A backend that has visited this many scopes starts a fresh table (a
 * subtransaction's abort looks at every entry: it stays cheap).
 */
#define HELD_SCOPES_RECYCLE	1024

/* Entries of the current generation: none, and an abort has nothing to do. */
static int	held_now = 0;

/*
 * The registry (fencing.scopes: its OID, storage and SQL version) this
 * transaction took its first hold in.  A hold names a row of it: after a
 * TRUNCATE of the registry, a DROP and CREATE EXTENSION or an update of the
 * extension, the scope may be another row under another id, whose raises
 * neither wait for this transaction nor are seen by it.  So a hold is used
 * again only in the registry it was taken in (check_held_registry()).
 */
static FencingRegistry held_registry;
static uint64 held_registry_epoch;	/* mark_cache_epoch() when it was read */

static void
check_held_registry(void)
{
	FencingRegistry now;

	/*
	 * Every change of the registry comes with a message for it, which moves
	 * the epoch: while the epoch stands, the registry does (one compare per
	 * row); after a message, compare what the registry is now.
	 */
	if (likely(mark_cache_epoch() == held_registry_epoch))
		return;
	(void) fencing_scopes_relid();
	fencing_registry_now(&now);
	if (unlikely(now.relid != held_registry.relid ||
				 now.relfilenode != held_registry.relfilenode ||
				 now.version != held_registry.version))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("fencing scopes were re-created during this transaction"),
				 errdetail("Table fencing.scopes was truncated, rewritten, created again or updated after this transaction took its scopes: the marks it holds name rows that are gone."),
				 errhint("Retry the transaction.")));
	held_registry_epoch = mark_cache_epoch();
}

/*
 * Set when a raise was deferred to the AFTER INSERT trigger (an INSERT ...
 * ON CONFLICT may not write the row it was admitted for).
 */
static bool raise_deferred = false;

/* Holds of this transaction with a deferred_by statement. */
static int	deferred_holds = 0;

/*
 * Set once this transaction changes a mark: from then on it reads marks it
 * may itself have changed (uncommitted), so it neither uses nor fills the
 * mark cache until it ends.
 */
static bool changed_marks = false;

static void
forget_held_scopes(void)
{
	held_generation++;
	held_now = 0;
	if (held_scopes != NULL && hash_get_num_entries(held_scopes) > HELD_SCOPES_RECYCLE)
	{
		hash_destroy(held_scopes);
		held_scopes = NULL;
	}
}

/* A registration as a writer at the mark, given back before the transaction ends. */
static void
unregister_entry(ScopeHold *entry)
{
	shared_marks_unregister(entry->cache_id, entry->lock_key.id);
	entry->registered = false;
}

/* The transaction ended: its scopes, locks and deferred raises are gone. */
void
scope_mark_at_xact_end(void)
{
	forget_held_scopes();
	scope_lock_forget();
	changed_marks = false;
	raise_deferred = false;
	deferred_holds = 0;
}

/*
 * A PREPARE TRANSACTION: a registration ends with the backend's transaction,
 * so the prepared transaction holds the scope lock instead (a raise waiting
 * for it meanwhile and this lock then wait for each other: Postgres cancels
 * one, 40P01): like any writer's, by the owner's lock once the transaction
 * holds SCOPE_LOCKS_MAX scope locks (scope_lock.c), so that a bulk writer's
 * prepared transaction keeps the lock table's room as bounded as before.
 */
void
scope_mark_before_prepare(void)
{
	HASH_SEQ_STATUS status;
	ScopeHold  *entry;

	if (held_now == 0)
		return;
	hash_seq_init(&status, held_scopes);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		/* a scope held exclusively too already has its lock */
		if (entry->generation != held_generation || !entry->registered ||
			entry->mode == ExclusiveLock)
			continue;
		(void) scope_lock_acquire(entry->scope, entry->lock_key.id, entry->lock_key.owner,
								  ShareLock, true, &entry->coarse);
		entry->registered = false;
	}
}

/*
 * A subtransaction's abort (ROLLBACK TO SAVEPOINT, an exception block, a
 * trigger that catches an error) releases the locks it took and rolls back
 * the marks it changed, while its parent keeps its own.  Subtransaction ids
 * only grow within a transaction and every open subtransaction above the
 * aborting one is its descendant, so what was taken at or above mySubid is
 * what the abort takes back, and exactly that is forgotten here: the other
 * locks, their count and the raises deferred under them stay with the
 * parent.  A commit hands everything to the parent, whose own abort then
 * takes it back by the same rule: nothing to do.
 */
void
scope_mark_at_subxact_abort(SubTransactionId mySubid)
{
	HASH_SEQ_STATUS status;
	ScopeHold  *entry;
	int			released = 0;

	if (held_now == 0)
		return;
	hash_seq_init(&status, held_scopes);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		bool		changed = false;

		if (entry->generation != held_generation)
			continue;
		/* a binding may have been checked against grants rolled back now */
		entry->bound_relid = InvalidOid;
		/* the write that confirmed the hold is gone: a lock kept goes back as before */
		if (entry->confirmed_subid >= mySubid)
		{
			entry->confirmed = false;
			entry->confirmed_subid = 0;
		}
		if (entry->excl_subid >= mySubid)
		{
			released += entry->excl_counted ? 1 : 0;
			entry->excl_subid = 0;
			entry->excl_counted = false;
			changed = true;
		}
		if (entry->share_subid >= mySubid)
		{
			if (entry->registered)
				unregister_entry(entry);
			released += entry->share_counted ? 1 : 0;
			entry->share_subid = 0;
			entry->share_counted = false;
			changed = true;
		}
		if (entry->mark_subid >= mySubid)
		{
			entry->mark_subid = 0;
			changed = true;
		}
		if (entry->created_subid >= mySubid)
		{
			/* the row it created is gone with it, and so is its id */
			entry->created_subid = 0;
			entry->lock_key.id = 0;
			changed = true;
		}
		if (!changed)
			continue;
		entry->mode = entry->excl_subid != 0 ? ExclusiveLock :
			entry->share_subid != 0 ? ShareLock : NoLock;
		/* a lock kept from the parent came before an upgrade: never fresh */
		entry->fresh = false;
		if (entry->mode == NoLock)
		{
			entry->mark = SCOPE_MARK_NONE;
			entry->mark_stale = false;
			entry->coarse = false;
		}
		else
			entry->mark_stale = true;	/* the parent's mark: read again */
		if (entry->deferred_by != NULL && entry->mode != ExclusiveLock)
		{
			entry->deferred_by = NULL;
			deferred_holds--;
		}
	}
	scope_lock_uncount(released);
}

static ScopeHold *
held_scope_entry(const char *scope)
{
	ScopeHold *entry;
	bool		found;
	uint32		hash = scope_hash(scope);

	if (held_scopes == NULL)
		held_scopes = fencing_scope_hash_create("fencing held scopes", sizeof(ScopeHold),
											   TopMemoryContext);
	Assert(hash == get_hash_value(held_scopes, scope));
	entry = hash_search_with_hash_value(held_scopes, scope, hash, HASH_ENTER, &found);
	if (!found)
	{
		entry->lock_key.id = 0;
		entry->key_epoch = 0;
		entry->cache_id = scope_inval_id_of_hash(hash);
	}
	if (found && entry->generation == held_generation && entry->mode != NoLock)
		check_held_registry();
	if (!found || entry->generation != held_generation)
	{
		if (held_now == 0)
		{
			(void) fencing_scopes_relid();
			fencing_registry_now(&held_registry);
			held_registry_epoch = mark_cache_epoch();
		}
		/*
		 * A key kept from an earlier transaction is a guess, checked under
		 * the lock it takes (locked_key_holds); after a change of the whole
		 * registry (its DDL) it is not even that.
		 */
		if (unlikely(entry->key_epoch != mark_cache_epoch()))
		{
			entry->lock_key.id = 0;
			entry->key_epoch = mark_cache_epoch();
		}
		held_now++;
		entry->generation = held_generation;
		entry->mode = NoLock;
		entry->mark = SCOPE_MARK_NONE;
		entry->fresh = false;
		entry->confirmed = false;
		entry->confirmed_subid = 0;
		entry->coarse = false;
		entry->registered = false;
		entry->deferred_by = NULL;
		entry->share_subid = 0;
		entry->excl_subid = 0;
		entry->share_counted = false;
		entry->excl_counted = false;
		entry->mark_subid = 0;
		entry->mark_stale = false;
		entry->created_subid = 0;
		entry->bound_relid = InvalidOid;
	}
	return entry;
}

/*
 * Lock a held scope's entry in "mode"; the first lock decides its level.
 * The entry remembers the subtransaction that took each mode, and whether
 * scope_lock.c counted it, for an abort to take back.
 */
static LockAcquireResult
lock_entry(ScopeHold *entry, LOCKMODE mode)
{
	LockAcquireResult res;
	bool		counted;

	Assert(entry->lock_key.id != 0);
	/*
	 * Until ALTER EXTENSION fencing UPDATE gives scopes their ids, they are
	 * locked by their name's hash, and the writer holds the registry too:
	 * the update's ALTER TABLE then waits for it, and no writer locked by a
	 * hash is still in flight when the first one locked by an id comes.
	 */
	if (unlikely(entry->lock_key.legacy))
		LockRelationOid(fencing_scopes_relid(), AccessShareLock);
	res = scope_lock_acquire(entry->scope, entry->lock_key.id, entry->lock_key.owner, mode,
							 entry->mode == NoLock, &entry->coarse);
	counted = res == LOCKACQUIRE_OK && !entry->coarse;
	if (mode == ExclusiveLock && entry->excl_subid == 0)
	{
		entry->excl_subid = GetCurrentSubTransactionId();
		entry->excl_counted = counted;
	}
	else if (mode == ShareLock && entry->share_subid == 0)
	{
		entry->share_subid = GetCurrentSubTransactionId();
		entry->share_counted = counted;
	}
	return res;
}

/*
 * Give back the lock of an entry that took it and admitted nothing under it;
 * a scope row it created to be locked goes too (nothing was written to it).
 */
static void
unlock_entry(ScopeHold *entry)
{
	if (entry->registered && entry->mode == ShareLock)
		unregister_entry(entry);
	else if (!entry->coarse)
		scope_lock_release(entry->lock_key.id, entry->lock_key.owner, entry->mode);
	if (entry->created_subid != 0)
	{
		scope_rows_remove_created(entry->scope);
		entry->created_subid = 0;
		entry->lock_key.id = 0;
	}
	if (entry->mode == ExclusiveLock)
	{
		entry->excl_subid = 0;
		entry->excl_counted = false;
	}
	else
	{
		entry->share_subid = 0;
		entry->share_counted = false;
	}
	entry->mode = NoLock;
	entry->fresh = false;
}

/*
 * The mark and the id, for a backend that holds the scope lock in share
 * mode, or before the lock to learn the id to lock by ("fill" NULL): from
 * the marks in memory, else from the registry (mark_cache_read()).  Not
 * from or into memory once this transaction changed marks.
 */
static int64
read_mark_shared(const ScopeHold *entry, ScopeKey *key, MarkFill *fill)
{
	return mark_cache_read(entry->scope, entry->cache_id, !changed_marks, key, fill);
}

/*
 * Fill the marks shared with other backends from a read made under the
 * entry's lock, once that lock is confirmed to be the scope's current one:
 * the key the read found is the key the lock was taken by, and the lock is
 * still held.  Nothing else fills shared memory (mark_cache.h).
 */
static void
share_confirmed(const ScopeHold *entry, const MarkFill *fill)
{
	if (!fill->pending || entry->mode == NoLock || entry->registered ||
		fill->key.id != entry->lock_key.id || fill->key.owner != entry->lock_key.owner ||
		fill->key.legacy != entry->lock_key.legacy)
		return;
	mark_cache_share(entry->scope, fill);
}

/*
 * A subtransaction that changed the mark of a scope this transaction still
 * holds was rolled back: read the parent's mark again (its own uncommitted
 * raises are visible to it), under the lock it holds.
 */
static void
refresh_stale_mark(ScopeHold *entry)
{
	ScopeKey	key;
	MarkFill	fill;

	entry->mark_stale = false;
	if (changed_marks || entry->mode == ExclusiveLock)
		entry->mark = mark_cache_read_row(entry->scope, NULL, &key);
	else if (entry->registered)
		entry->mark = read_mark_shared(entry, &key, NULL);
	else
	{
		entry->mark = read_mark_shared(entry, &key, &fill);
		share_confirmed(entry, &fill);
	}
}

/*
 * The mark, for a backend that holds the scope lock exclusively and is about
 * to change it: from the table, never from or into the cache.
 */
static int64
read_mark_for_change(const char *scope, HeapTuple *row, ScopeKey *key)
{
	changed_marks = true;
	return mark_cache_read_for_change(scope, row, key);
}

/*
 * What a lock of the entry's scope is taken by (its id and owner) was read
 * before the lock; read again under it, it must be the same.  Only a change
 * of owner, or a row deleted and created again by hand (a superuser),
 * changes it: a lock taken for this entry alone is given back and the
 * caller locks again by what is now read; a lock held from before cannot
 * be, and the transaction is asked to retry.
 */
static bool
locked_key_holds(ScopeHold *entry, const ScopeKey *key)
{
	if (key->id == entry->lock_key.id && key->owner == entry->lock_key.owner &&
		key->legacy == entry->lock_key.legacy)
		return true;
	if (!entry->fresh && !entry->coarse)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("the registry row of scope \"%s\" was replaced while this transaction held it",
						entry->scope),
				 errhint("Retry the transaction.")));
	if (!entry->coarse || key->owner != entry->lock_key.owner)
		unlock_entry(entry);
	entry->lock_key = *key;
	/* the owner's lock covers the scope under a new id too */
	return entry->coarse && entry->mode != NoLock;
}

/* The entry's scope id, read without a lock (0: no such scope). */
static int64
learn_scope_id(ScopeHold *entry)
{
	if (entry->lock_key.id == 0)
	{
		(void) read_mark_shared(entry, &entry->lock_key, NULL);
		entry->key_epoch = mark_cache_epoch();
	}
	return entry->lock_key.id;
}

/*
 * A write at the mark without the scope lock: registered as a writer of the
 * scope in shared memory, with the mark kept there (mark_cache.c), which
 * every raise of the scope drains.  Not for a transaction that changed
 * marks (it must read its own), nor for a scope locked by its name's hash.
 */
static bool
register_at_mark(ScopeHold *entry)
{
	ScopeKey	key;
	int64		mark;
	FencingRegistry registry;

	if (changed_marks || !shared_marks_on())
		return false;
	(void) fencing_scopes_relid();
	fencing_registry_now(&registry);
	shared_marks_registry_seen(&registry);
	if (!shared_marks_register(entry->cache_id, entry->scope, &mark, &key))
		return false;
	if (unlikely(key.legacy))
	{
		shared_marks_unregister(entry->cache_id, key.id);
		return false;
	}
	entry->lock_key = key;
	entry->mode = ShareLock;
	entry->registered = true;
	entry->fresh = true;
	entry->coarse = false;
	entry->mark = mark;
	entry->share_subid = GetCurrentSubTransactionId();
	entry->share_counted = false;
	return true;
}

/*
 * On a Citus worker fed the coordinator's marks, a writer that would wait
 * for the scope's lock while a raise fed by the coordinator is in flight
 * here gives way (40P01) rather than wait: its transaction may hold the
 * scope on another node, where the takeover waits for it, and Citus would
 * cancel the takeover, the younger of the two (scope_lock.c).  Its term is
 * being fenced anyway.  A writer that finds the lock free, or held for a
 * change of grants, goes on as before.
 */
static void
give_way_to_fed_raise(ScopeHold *entry)
{
	if (entry->mode != NoLock || entry->lock_key.legacy ||
		likely(!citus_node_is_worker()) || !cluster_marks_enabled())
		return;
	if (scope_lock_share_would_wait(entry->lock_key.id) &&
		scope_lock_fed_raise_in_flight(entry->lock_key.id))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_DEADLOCK_DETECTED),
				 errmsg("a takeover of scope \"%s\" is in flight on this node", entry->scope),
				 errdetail("This transaction would wait for it, and it may wait for this transaction on another node of the Citus cluster: this transaction gives way."),
				 errhint("The takeover fences the term of this transaction once it commits; a writer at the new term retries.")));
}

/*
 * A write at the mark: the scope's lock in share mode, and its mark read
 * under it.  False, holding nothing, for a scope that does not exist.
 */
static bool
lock_share(ScopeHold *entry)
{
	for (;;)
	{
		LockAcquireResult res;
		ScopeKey	key;
		MarkFill	fill;

		if (learn_scope_id(entry) == 0)
			return false;
		give_way_to_fed_raise(entry);
		res = lock_entry(entry, ShareLock);
		entry->mode = ShareLock;
		entry->fresh = (res == LOCKACQUIRE_OK && !entry->coarse);
		entry->mark = read_mark_shared(entry, &key, &fill);
		if (locked_key_holds(entry, &key))
		{
			/* only now is the lock known to be the scope's: shared memory may learn the mark */
			share_confirmed(entry, &fill);
			break;
		}
	}
	if (entry->lock_key.id == 0)
	{
		/* the row went away under a coarse lock: as if never locked */
		entry->mark = SCOPE_MARK_NONE;
		return false;
	}
	return true;
}

static void lock_exclusive(ScopeHold *entry, ScopeMissing missing, ScopePrivilege priv,
						   HeapTuple *row, bool created);
static bool may_write_raise(Relation rel);

/*
 * Whether the first write of a scope in this transaction is, by the mark
 * read without a lock, a raise its writer may make (scope_acl_may_raise():
 * the right to raise, told without an error, so that a stranger never holds
 * a scope exclusively).  The scope is then locked exclusively at once, not
 * first in share mode, given back and taken again: the scope's id is learnt
 * by that very read.  Foreseen when the id is not known yet (the read is
 * made anyway), or past the fine locks (scope_lock.c), where a share by
 * the owner's lock would wait for (or step around) a raise of another scope
 * of the owner in flight, and hold off the owner's raises of every other
 * scope until the transaction ends.  Only the lock taken depends on this
 * guess: the mark is read again under the lock, and the verdict made from
 * that read (a write found at the mark is admitted, one below it refused;
 * a raise's rights are checked again, with their errors, when it is
 * admitted, raise_admitted()).  A write not foreseen as a raise takes the
 * way of a write at the mark, and is judged there as before.
 */
static bool
raise_foreseen(ScopeHold *entry, int64 token, Relation rel)
{
	ScopeKey	key;
	ScopeInfo	info;
	int64		guess;

	if (entry->lock_key.id != 0 && likely(!scope_lock_past_fine()))
		return false;
	guess = read_mark_shared(entry, &key, NULL);
	if (entry->lock_key.id == 0)
	{
		entry->lock_key = key;
		entry->key_epoch = mark_cache_epoch();
	}
	if (key.id == 0 || key.id != entry->lock_key.id ||
		(guess != SCOPE_MARK_NONE && token <= guess) || !may_write_raise(rel))
		return false;
	/* what the rights depend on, as read with the guess */
	info.exists = true;
	info.owner = key.owner;
	info.issued = key.issued;
	info.epoch = -1;
	info.mark = guess;
	return scope_acl_may_raise(entry->scope, token, &info);
}

/*
 * The first write of a scope in this transaction: a registration at the
 * mark, or the share lock and the mark; if the token is above the mark and
 * nothing was written under the lock yet, the lock given back (the raise
 * comes back exclusively), unless the raise was foreseen and the scope
 * locked exclusively at once.  False for a scope that does not exist, with
 * nothing held.
 */
static bool
lock_at_mark(ScopeHold *entry, int64 token, Relation rel)
{
	if (!register_at_mark(entry))
	{
		if (raise_foreseen(entry, token, rel))
		{
			lock_exclusive(entry, SCOPE_MISSING_OK, SCOPE_PRIV_WRITE, NULL, false);
			if (entry->mode == NoLock)
				return false;
			/*
			 * Overtaken while it waited for the lock: a raise to the token
			 * (or past it) committed.  A write at or below the mark holds
			 * the scope as the guess had not been made, in share mode:
			 * kept exclusively, it would hold off the other writers at the
			 * mark until its transaction ends (and deadlock with them).  A
			 * coarse lock cannot be given back (scope_lock.c): the owner's
			 * lock stays, and the scope's own lock goes down to share
			 * mode, so a later raise of the scope in this transaction
			 * takes it exclusively again and waits for those writers.
			 */
			if (token > entry->mark)
				return true;
			if (entry->coarse && entry->excl_subid == GetCurrentSubTransactionId())
			{
				scope_lock_writers_go_on(entry->lock_key.id);
				entry->mode = ShareLock;
				entry->share_subid = entry->excl_subid;
				entry->share_counted = false;
				entry->excl_subid = 0;
				entry->excl_counted = false;
				return true;
			}
			if (!entry->fresh)
				return true;
			unlock_entry(entry);
		}
		if (!lock_share(entry))
			return false;
	}
	if (token > entry->mark && entry->fresh && !entry->confirmed)
		unlock_entry(entry);
	return true;
}

/*
 * Create the entry's scope row, owned by the user; true if this transaction
 * created it (false: another one had, and has committed).  The transaction
 * reads its own uncommitted row from now on: it caches no mark.
 */
static bool
create_scope_row(ScopeHold *entry, bool issued)
{
	changed_marks = true;
	entry->lock_key.id = 0;
	if (!scope_rows_create(entry->scope, GetUserId(), issued))
		return false;
	entry->created_subid = GetCurrentSubTransactionId();
	return true;
}

/*
 * The first write of a scope that does not exist: with the right to raise
 * (and so to create it), its row is created, 'external' and the writer's,
 * and locked exclusively by its new id; true.  False, holding nothing, when
 * another transaction created it first: its creator has committed (the
 * insert waited for it), and the write is judged at the mark it set.
 */
static bool
create_for_raise(ScopeHold *entry, int64 token, Relation rel)
{
	ScopeInfo	info;

	/* scope security: no privilege, no row and no lock */
	if (!scope_acl_check_raise(entry->scope, token, &info))
	{
		FenceWrite	w = {rel, entry->scope, NULL};

		fence_reject_not_issued(&w, token, info.epoch);
	}
	if (!create_scope_row(entry, false))
		return false;
	lock_exclusive(entry, SCOPE_MISSING_CREATE_EXTERNAL, SCOPE_PRIV_WRITE, NULL, true);
	return true;
}

/*
 * A scope was missing when the caller's right to it was checked, and
 * another transaction created it since (the insert that would have created
 * it waited for that one to commit): it is someone else's scope now, judged
 * as one that existed.  A write needs its table's binding to it (the table
 * owner's write privilege); a call without a table (takeover(), the clock,
 * a reset) the user's own privilege "priv".  Checked before any lock.
 */
static void
recheck_created_elsewhere(const char *scope, Relation rel, bool bound, ScopePrivilege priv)
{
	ScopeInfo	info;

	/* the creator's commit told every backend: forget "no such scope" */
	AcceptInvalidationMessages();
	if (rel == NULL)
		scope_acl_require(scope, priv, GetUserId(), SCOPE_MISSING_OK, &info);
	else if (bound)
		scope_binding_require(rel, scope);
	else
		scope_binding_require_fixed(rel, scope);
}

/*
 * A change of the mark: the scope's lock exclusively (waiting for its
 * writers at the mark), and the mark (with row, the scope's row) read
 * under it.  A scope that does not exist is first created, owned by the
 * caller, 'issued' or 'external' as "missing" says (the caller checked
 * that the user may create it): a scope is locked by its id, which it
 * gets when it is created.  Its mark is then none (the row's 0 is a
 * placeholder until the caller stores or raises the mark; "created": the
 * caller created it), and no writer can be at it.  Created by another
 * transaction meanwhile, it is checked for "priv" first.  With
 * SCOPE_MISSING_OK a missing scope is left alone: nothing is locked, and
 * the mark is none.
 */
static void
lock_exclusive(ScopeHold *entry, ScopeMissing missing, ScopePrivilege priv,
			   HeapTuple *row, bool created)
{
	for (;;)
	{
		LockAcquireResult res;
		bool		upgrade = entry->mode != NoLock;
		ScopeKey	key;
		int64		waited_id;

		if (learn_scope_id(entry) == 0)
		{
			if (missing == SCOPE_MISSING_OK || missing == SCOPE_MISSING_MAY_CREATE)
			{
				entry->mark = SCOPE_MARK_NONE;
				if (row != NULL)
					*row = NULL;
				return;
			}
			created = create_scope_row(entry, missing == SCOPE_MISSING_CREATE_ISSUED);
			if (!created)
				recheck_created_elsewhere(entry->scope, NULL, false, priv);
			(void) mark_cache_read_row(entry->scope, NULL, &entry->lock_key);
			if (entry->lock_key.id == 0)
			{
				Relation	scopes = table_open(fencing_scopes_relid(), AccessShareLock);

				direct_row_report_deleted(scopes, entry->scope);
			}
		}
		res = lock_entry(entry, ExclusiveLock);
		/* an upgrade keeps the share lock, which a write was admitted under */
		entry->fresh = (!upgrade && res == LOCKACQUIRE_OK && !entry->coarse);
		entry->mode = ExclusiveLock;
		/*
		 * The owner's lock does not hold off the scope's own writers and
		 * raisers (scope_lock.c): wait for them before the mark is read, so
		 * that a raise of theirs that commits meanwhile is read (a scope
		 * this transaction created has none).
		 */
		waited_id = 0;
		if (entry->coarse && !created)
		{
			waited_id = entry->lock_key.id;
			scope_lock_wait_for_writers(waited_id);
		}
		entry->mark = read_mark_for_change(entry->scope, row, &key);
		if (locked_key_holds(entry, &key))
			break;
		/*
		 * Locked by an owner the scope no longer has (a key remembered from
		 * an earlier transaction, before an owner's change): the scope's own
		 * lock taken for that owner goes back with the entry's, or the lock
		 * taken again by the new owner would find it held, and an overtaken
		 * raise would then keep the scope exclusively to the end.
		 */
		if (waited_id != 0)
			scope_lock_writers_wait_undone(waited_id);
	}
	if (created)
		entry->mark = SCOPE_MARK_NONE;
	/*
	 * Last, once no share lock can be granted (nothing can fill the scope's
	 * shared entry again): the writers registered at the mark (only where
	 * marks are shared can a writer register).
	 */
	if (shared_marks_on())
		shared_marks_drain(entry->cache_id, entry->lock_key.id);
}

/*
 * A write was admitted under the entry's lock: the lock stays to the end of
 * the transaction.  Unless the subtransaction that wrote is rolled back,
 * which takes the write back, and with it the confirmation.
 */
static void
confirm_entry(ScopeHold *entry)
{
	if (!entry->confirmed)
		entry->confirmed_subid = GetCurrentSubTransactionId();
	entry->confirmed = true;
}

/* Raise a held scope's mark, for a write (to rel, if any) that passed every check. */
static void
raise_admitted(ScopeHold *entry, int64 token, Relation rel)
{
	ScopeInfo	info;

	confirm_entry(entry);
	/* rights: write privilege, 'issued' tokens; creates */
	if (!scope_acl_admit_raise(entry->scope, token, &info))
	{
		FenceWrite	w = {rel, entry->scope, NULL};

		fence_reject_not_issued(&w, token, info.epoch);
	}
	scope_rows_set_mark(entry->scope, token, true);
	fencing_require_durable_commit();
	entry->mark = token;
	entry->mark_subid = GetCurrentSubTransactionId();
}

/*
 * A stale write holds nothing: a lock this entry took for it, with no write
 * admitted under it, is given back at once (under policy "skip" the
 * transaction goes on, and must not hold up the writers of the new term).
 */
static bool
stale(ScopeHold *entry)
{
	scope_mark_abandon(entry);
	return false;
}

/*
 * Whether a write to rel may create the entry's scope or raise its mark:
 * not where marks are a cluster's (state/cluster_marks.c), where only the
 * coordinator's calls do, on every node.  A call that is no write
 * (takeover(), rel NULL) may.
 */
static bool
may_write_raise(Relation rel)
{
	return rel == NULL || !cluster_marks_enabled();
}

/* A write the cluster's node may not admit: nothing held, ZF003. */
static void
not_on_this_node(ScopeHold *entry, int64 token, Relation rel)
{
	FenceWrite	w = {rel, entry->scope, NULL};
	int64		mark = entry->mode == NoLock && entry->lock_key.id == 0 ? -1 : entry->mark;

	scope_mark_abandon(entry);
	fence_reject_above_cluster_mark(&w, token, mark);
}

bool
scope_mark_check(const char *scope, int64 token, int64 *mark, ScopeHold **hold,
				 Relation rel, bool bound)
{
	ScopeHold *entry = held_scope_entry(scope);

	*hold = entry;
	/*
	 * A scope column names only scopes its table's owner may write to:
	 * checked before any lock, for each table that names the scope (a
	 * scope this transaction holds for another table proves nothing).
	 */
	if (bound && unlikely(entry->bound_relid != RelationGetRelid(rel)))
	{
		scope_binding_require(rel, scope);
		entry->bound_relid = RelationGetRelid(rel);
	}
	if (unlikely(entry->mark_stale))
		refresh_stale_mark(entry);
	/* the common case, every row after the first of the transaction */
	if (entry->mode != NoLock && token <= entry->mark)
	{
		*mark = entry->mark;
		return token == entry->mark || stale(entry);
	}

	if (entry->mode == NoLock && !lock_at_mark(entry, token, rel))
	{
		/* a scope that does not exist */
		if (!may_write_raise(rel))
			not_on_this_node(entry, token, rel);
		if (!create_for_raise(entry, token, rel))
		{
			recheck_created_elsewhere(scope, rel, bound, SCOPE_PRIV_WRITE);
			if (bound)
				entry->bound_relid = RelationGetRelid(rel);
			if (!lock_at_mark(entry, token, rel))
				entry->mark = SCOPE_MARK_NONE;
		}
	}

	/* also when this transaction holds the scope exclusively (a takeover) */
	if (token > entry->mark && !may_write_raise(rel))
		not_on_this_node(entry, token, rel);
	if (token > entry->mark && entry->mode != ExclusiveLock)
	{
		ScopeInfo	info;

		/* scope security: no privilege, no exclusive lock to wait for */
		if (!scope_acl_check_raise(scope, token, &info))
		{
			FenceWrite	w = {rel, scope, NULL};

			fence_reject_not_issued(&w, token, info.epoch);
		}
		lock_exclusive(entry, SCOPE_MISSING_CREATE_EXTERNAL, SCOPE_PRIV_WRITE, NULL, false);
	}

	*mark = entry->mark;
	if (token < entry->mark)
		return stale(entry);
	return true;
}

void
scope_mark_confirm(ScopeHold *entry, int64 token, Relation rel)
{
	Assert(entry->mode != NoLock && token >= entry->mark);
	confirm_entry(entry);
	if (token > entry->mark)
	{
		Assert(entry->mode == ExclusiveLock);
		raise_admitted(entry, token, rel);
	}
}

bool
scope_mark_admits_without_raise(const ScopeHold *entry, int64 token)
{
	return token <= entry->mark;
}

void
scope_mark_defer(ScopeHold *entry, const void *statement)
{
	Assert(entry->mode == ExclusiveLock);
	raise_deferred = true;
	/* the lock stays while the row may be written: until the statement ends */
	if (entry->deferred_by == NULL)
	{
		entry->deferred_by = statement;
		deferred_holds++;
	}
}

/*
 * The end of a statement (after its AFTER triggers fired): the exclusive
 * locks it took for raises it deferred, and that no written row confirmed
 * (every row conflicted: ON CONFLICT DO NOTHING, or DO UPDATE ... WHERE
 * false), are given back, so that the scope's writers and takeovers do not
 * wait for the rest of the transaction.  A lock that was already held
 * before, or under which anything was written, stays.
 */
void
scope_mark_statement_done(const void *statement)
{
	HASH_SEQ_STATUS status;
	ScopeHold  *entry;

	if (deferred_holds == 0)
		return;
	hash_seq_init(&status, held_scopes);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (entry->generation != held_generation || entry->deferred_by != statement)
			continue;
		entry->deferred_by = NULL;
		deferred_holds--;
		if (entry->mode == ExclusiveLock && entry->fresh && !entry->confirmed)
			unlock_entry(entry);
	}
}

bool
scope_mark_raise_deferred(const char *scope, int64 token, Relation rel)
{
	ScopeHold *entry;

	if (!raise_deferred)
		return false;
	entry = held_scope_entry(scope);
	if (entry->mark_stale)
		refresh_stale_mark(entry);
	if (entry->mode != ExclusiveLock || token <= entry->mark)
		return false;
	raise_admitted(entry, token, rel);
	return true;
}

void
scope_mark_abandon(ScopeHold *entry)
{
	if (entry->mode == NoLock || !entry->fresh || entry->confirmed ||
		entry->deferred_by != NULL)
		return;
	unlock_entry(entry);
}

bool
scope_mark_admit(const char *scope, int64 token, int64 *mark, Relation rel, bool bound)
{
	ScopeHold  *hold;

	if (!scope_mark_check(scope, token, mark, &hold, rel, bound))
		return false;
	scope_mark_confirm(hold, token, rel);
	return true;
}

int64
scope_mark_lock_exclusive(const char *scope, ScopeMissing missing, ScopePrivilege priv,
						  HeapTuple *row)
{
	ScopeHold *entry = held_scope_entry(scope);

	if (entry->mark_stale)
		refresh_stale_mark(entry);
	if (entry->mode != ExclusiveLock)
	{
		lock_exclusive(entry, missing, priv, row, false);
		if (entry->mode == NoLock)
			return SCOPE_MARK_NONE;		/* missing, and left alone */
	}
	else if (row != NULL)
	{
		ScopeKey	key;

		(void) mark_cache_read_row(scope, row, &key);
	}
	confirm_entry(entry);
	return entry->mark;
}

int64
scope_mark_scope_id(const char *scope, ScopeMissing missing, ScopePrivilege priv)
{
	ScopeHold *entry = held_scope_entry(scope);

	if (learn_scope_id(entry) == 0 &&
		(missing == SCOPE_MISSING_CREATE_ISSUED || missing == SCOPE_MISSING_CREATE_EXTERNAL))
	{
		/* kept whatever follows: the caller goes on to use the scope */
		changed_marks = true;
		if (!scope_rows_create(scope, GetUserId(), missing == SCOPE_MISSING_CREATE_ISSUED))
			recheck_created_elsewhere(scope, NULL, false, priv);
		(void) mark_cache_read_row(scope, NULL, &entry->lock_key);
	}
	return entry->lock_key.id;
}

void
scope_mark_remember(const char *scope, int64 mark)
{
	ScopeHold *entry = held_scope_entry(scope);

	Assert(entry->mode == ExclusiveLock);
	entry->mark = mark;
	entry->mark_subid = GetCurrentSubTransactionId();
}

/* Set a mark this transaction holds exclusively: reset_mark(), failover_fence.c */
void
scope_mark_store(const char *scope, int64 mark)
{
	scope_rows_set_mark(scope, mark, false);
	scope_mark_remember(scope, mark);
	fencing_require_durable_commit();
}

/*
 * fencing.reset_mark(scope, mark): the one way to lower a mark, for the
 * scope's owner (or a superuser); checked before the lock, so others cannot
 * queue behind the scope's writers.  It waits for in-flight writers of the
 * scope like any raise.
 */
FENCING_FUNCTION(fencing_reset_mark);

Datum
fencing_reset_mark(PG_FUNCTION_ARGS)
{
	ScopeInfo	info;
	char	   *scope;
	int64		new_mark;
	int64		old_mark;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("scope and mark must not be null")));
	scope = text_to_cstring(PG_GETARG_TEXT_PP(0));
	new_mark = PG_GETARG_INT64(1);
	fencing_check_scope_name(scope);
	fencing_check_mark(scope, new_mark);

	/* rights: the owner; a new scope is the caller's */
	scope_acl_require(scope, SCOPE_PRIV_OWNER, GetUserId(), SCOPE_MISSING_MAY_CREATE, &info);
	old_mark = scope_mark_lock_exclusive(scope, SCOPE_MISSING_CREATE_EXTERNAL, SCOPE_PRIV_OWNER, NULL);
	scope_acl_require(scope, SCOPE_PRIV_OWNER, GetUserId(), SCOPE_MISSING_CREATE_EXTERNAL, &info);
	scope_mark_store(scope, new_mark);

	if (old_mark != SCOPE_MARK_NONE && new_mark < old_mark)
		ereport(NOTICE,
				(errmsg("mark of scope \"%s\" lowered from " INT64_FORMAT " to " INT64_FORMAT,
						scope, old_mark, new_mark),
				 errdetail("Writers holding tokens from " INT64_FORMAT " up are admitted again.",
						   new_mark)));

	if (old_mark == SCOPE_MARK_NONE)
		PG_RETURN_NULL();
	PG_RETURN_INT64(old_mark);
}

/*
 * fencing.takeover(scope, token): the new holder of an external lock (etcd,
 * ZooKeeper, Consul, Kubernetes) raises the scope's mark to its token at
 * once, so the previous holder is fenced at takeover, not at the new
 * holder's first write.  Like a raising write: the write privilege (checked
 * before any lock), the exclusive scope lock (waits for in-flight writers of
 * the scope), a durable commit; an 'issued' scope takes only its own terms
 * (ZF003).  A token below the mark is stale (ZF001); the mark itself is
 * accepted and changes nothing (a retried takeover).  Returns the previous
 * mark, NULL for a new scope.  Its rejections name no table, and count
 * under the scope (the caller holds the write privilege on it).
 */
FENCING_FUNCTION(fencing_takeover);

Datum
fencing_takeover(PG_FUNCTION_ARGS)
{
	ScopeInfo	info;
	ScopeHold  *hold;
	char	   *scope;
	int64		token;
	int64		mark;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("scope and token must not be null")));
	scope = text_to_cstring(PG_GETARG_TEXT_PP(0));
	token = PG_GETARG_INT64(1);
	fencing_check_scope_name(scope);
	fencing_check_token(token);

	/* rights: write, also when nothing is raised */
	scope_acl_require(scope, SCOPE_PRIV_WRITE, GetUserId(), SCOPE_MISSING_MAY_CREATE, &info);
	if (!scope_mark_check(scope, token, &mark, &hold, NULL, false))
	{
		FenceWrite	w = {NULL, scope, NULL};

		(void) fence_reject_stale(&w, token, mark, false, false);
	}
	scope_mark_confirm(hold, token, NULL);

	if (mark == SCOPE_MARK_NONE)
		PG_RETURN_NULL();
	PG_RETURN_INT64(mark);
}

int64
scope_mark_committed(const char *scope, int64 *scope_id)
{
	ScopeKey	key;
	int64		mark = mark_cache_read_row(scope, NULL, &key);

	*scope_id = key.legacy ? 0 : key.id;
	return mark;
}

/*
 * fencing.committed_mark(scope): the scope's committed mark, read with a
 * fresh snapshot (also under REPEATABLE READ), without any lock; NULL for
 * an unknown scope or one the caller may not read.  For the lease functions,
 * which judge a lease fenced when the mark is above its term.
 */
FENCING_FUNCTION(fencing_committed_mark);

Datum
fencing_committed_mark(PG_FUNCTION_ARGS)
{
	char	   *scope = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			roleid = GetUserId();
	int64		mark;
	ScopeKey	key;

	if (strlen(scope) == 0 || strlen(scope) > FENCING_SCOPE_MAX_LEN)
		PG_RETURN_NULL();
	if (!scope_acl_may_read(scope, roleid))
		PG_RETURN_NULL();
	mark = mark_cache_read_row(scope, NULL, &key);
	if (mark == SCOPE_MARK_NONE)
		PG_RETURN_NULL();
	PG_RETURN_INT64(mark);
}

/*
 * fencing.raise_pending(): the WHEN condition of the AFTER INSERT trigger,
 * so that it is queued only in transactions that deferred a raise.
 */
FENCING_FUNCTION(fencing_raise_pending);

Datum
fencing_raise_pending(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(raise_deferred);
}

/*
 * fencing.forget_cached_marks(): trigger on fencing.scopes, and since 1.3
 * on fencing.scope_grants (the binding answers of security/scope_acl.c), ENABLE
 * ALWAYS (it also fires under session_replication_role = replica: logical
 * replication apply, restores).  The scope is the first column of both
 * tables.  Any write of the table, the extension's
 * own or anyone else's (a superuser's UPDATE), makes every backend forget
 * the scopes it wrote when the writing transaction commits: as a row
 * trigger, each row's scope (old and new name); as a statement trigger
 * (TRUNCATE, and 1.1's statement trigger until the update to 1.2), every
 * scope.  This transaction caches nothing until it ends.
 */
FENCING_FUNCTION(fencing_forget_cached_marks);

static void
forget_row_scope(TriggerData *trigdata, HeapTuple tuple)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, Anum_scopes_scope,
								 RelationGetDescr(trigdata->tg_relation), &isnull);

	if (isnull)
		return;
	/* now, in shared memory (after the row changed); at commit, in every backend */
	mark_cache_forget(TextDatumGetCString(d));
	scope_rows_invalidate(TextDatumGetCString(d));
}

Datum
fencing_forget_cached_marks(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("forget_cached_marks: not called by trigger manager")));
	changed_marks = true;
	if (!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
	{
		mark_cache_forget_all();
		scope_rows_invalidate_all();
		return PointerGetDatum(NULL);
	}
	if (!TRIGGER_FIRED_AFTER(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("forget_cached_marks: must be fired AFTER ROW or FOR EACH STATEMENT")));
	forget_row_scope(trigdata, trigdata->tg_trigtuple);
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		forget_row_scope(trigdata, trigdata->tg_newtuple);
	return PointerGetDatum(NULL);
}
