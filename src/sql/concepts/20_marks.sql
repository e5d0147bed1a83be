-- 20_marks.sql: scopes and their high-water marks.
-- One row per scope in fencing.scopes: its mark (the highest token
-- accepted), its latest term, its owner and where its tokens come from.
-- Marks only rise (I2): the trigger (40_trigger.sql), fence_next_epoch()
-- and takeover() raise them; reset_mark() is the one way to lower one.
-- Locking, reading and raising marks: src/marks/.

-- Scope ids: each scope gets one when it is created, and is locked by it
-- (src/marks/scope_lock.c), never by its name.
CREATE SEQUENCE fencing.scope_ids AS bigint MINVALUE 1 NO CYCLE;
COMMENT ON SEQUENCE fencing.scope_ids IS 'The ids of scopes: one for each scope when it is created.';
-- kept by pg_dump with the scopes' rows
SELECT pg_catalog.pg_extension_config_dump('fencing.scope_ids', '');
REVOKE ALL ON fencing.scope_ids FROM PUBLIC;

CREATE TABLE fencing.scopes (
    scope           text COLLATE "C" PRIMARY KEY,
    mark            bigint NOT NULL CHECK (mark OPERATOR(pg_catalog.>=) 0),
    mark_raised_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    epoch           bigint,
    holder          text,
    epoch_issued_at timestamptz,
    terms_issued    bigint NOT NULL DEFAULT 0,
    owner           pg_catalog.regrole NOT NULL,
    tokens          text NOT NULL,
    id              bigint NOT NULL DEFAULT pg_catalog.nextval('fencing.scope_ids'::pg_catalog.regclass),
    CHECK (pg_catalog.octet_length(scope) OPERATOR(pg_catalog.<=) 200
           AND scope OPERATOR(pg_catalog.<>) ''),
    CONSTRAINT scopes_tokens_check
        CHECK (tokens OPERATOR(pg_catalog.=) 'issued' OR tokens OPERATOR(pg_catalog.=) 'external')
);
COMMENT ON TABLE fencing.scopes IS 'Per-scope high-water mark and latest term. Written only by the extension.';
COMMENT ON COLUMN fencing.scopes.owner IS 'The role that owns the scope: all privileges, grants, resets.';
COMMENT ON COLUMN fencing.scopes.id IS 'The number the scope is locked by, drawn from fencing.scope_ids when the scope is created: no name collides with it.';
COMMENT ON COLUMN fencing.scopes.tokens IS 'issued: a write raises the mark only to a term issued for the scope; external: to any higher token.';
-- kept by pg_dump, so a dump/restore keeps marks
SELECT pg_catalog.pg_extension_config_dump('fencing.scopes', '');
-- readable row by row as the scope's privileges say (50_security.sql)
REVOKE ALL ON fencing.scopes FROM PUBLIC;
GRANT SELECT ON fencing.scopes TO PUBLIC;

-- The repair of a scope is its owner's: checked in C (owner or superuser).
-- EXECUTE is granted to PUBLIC explicitly (1.0 revoked it; upgraded installs
-- have this ACL, and test 99_upgrade_objects compares ACLs).
CREATE FUNCTION fencing.reset_mark(scope text, mark bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_reset_mark'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.reset_mark(text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fencing.reset_mark(text, bigint) TO PUBLIC;
COMMENT ON FUNCTION fencing.reset_mark(text, bigint) IS
'Sets a scope''s mark, lower if need be; the only way to lower one. For the scope''s owner or a superuser. Returns the previous mark.';

-- External tokens fence at takeover: the new holder raises the mark at once.
CREATE FUNCTION fencing.takeover(scope text, token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_takeover'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.takeover(text, bigint) IS
'Raises a scope''s mark to the token of its new holder at once (an etcd lock key''s mod_revision, a ZooKeeper czxid, a Consul LockIndex, a Kubernetes leaseTransitions), so the previous holder is fenced before the new one writes. Waits for in-flight writers of the scope, commits durably, needs the write privilege; a token below the mark fails with ZF001. Returns the previous mark.';

-- After a failover that lost commits (src/marks/failover_fence.c): lift the
-- marks of 'issued' scopes to the floor of the server's timeline, so every
-- term of the timelines before it is fenced before any new term is taken.
-- For the failover manager's promotion hook; a superuser's by default.
CREATE FUNCTION fencing.fence_older_timelines(max_scopes integer DEFAULT 1000)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_fence_older_timelines'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.fence_older_timelines(integer) FROM PUBLIC;
COMMENT ON FUNCTION fencing.fence_older_timelines(integer) IS
'After a promotion: raises the mark of every ''issued'' scope below the floor of this server''s timeline (fencing.clock_timeline().term_floor) to that floor, so that a writer holding a term of an earlier timeline is rejected before the new leader takes its term. Each scope as its owner''s raise: waits for its in-flight writers, commits durably. At most max_scopes per call (call again until it returns 0); returns how many marks it raised. ''external'' scopes are left to takeover().';

-- Leases agree with the fence: a lease whose term is below the scope's mark
-- (a higher term was issued, or a higher token written) is not live.
CREATE FUNCTION fencing.committed_mark(scope text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_committed_mark'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.committed_mark(text) IS
'The committed mark of a scope, read with a fresh snapshot and no lock; NULL for an unknown scope or one the caller may not read.';

-- Marks kept in shared memory for every backend (src/marks/mark_cache.c),
-- when the library is preloaded.
CREATE FUNCTION fencing.shared_marks_info(OUT capacity bigint, OUT entries bigint,
                                          OUT hits bigint, OUT fills bigint,
                                          OUT forgets bigint, OUT resets bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_shared_marks_info'
LANGUAGE C VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION fencing.shared_marks_info() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fencing.shared_marks_info() TO pg_monitor;
COMMENT ON FUNCTION fencing.shared_marks_info() IS
'The marks kept in shared memory for every backend (fencing.shared_marks; fencing preloaded), for superusers and pg_monitor: capacity (0: none kept), entries held now (all databases), and since the server started: hits (a backend used a mark another read), fills, forgets (messages that made a set of entries forget a scope) and resets (every entry forgotten at once).';

-- Cached marks (src/marks/mark_cache.c): a write of a row of fencing.scopes
-- makes every backend forget that scope only, and the triggers fire ALWAYS,
-- also under session_replication_role = replica (logical replication apply,
-- restores).
CREATE FUNCTION fencing.forget_cached_marks()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fencing_forget_cached_marks'
LANGUAGE C;
REVOKE ALL ON FUNCTION fencing.forget_cached_marks() FROM PUBLIC;
COMMENT ON FUNCTION fencing.forget_cached_marks() IS
'Trigger function on fencing.scopes and fencing.scope_grants: makes every backend forget what it cached of the scopes a committed write changed, marks and privileges (all of them for TRUNCATE).';
CREATE TRIGGER forget_cached_marks AFTER INSERT OR UPDATE OR DELETE
    ON fencing.scopes FOR EACH ROW EXECUTE FUNCTION fencing.forget_cached_marks();
CREATE TRIGGER forget_all_cached_marks AFTER TRUNCATE
    ON fencing.scopes FOR EACH STATEMENT EXECUTE FUNCTION fencing.forget_cached_marks();
ALTER TABLE fencing.scopes ENABLE ALWAYS TRIGGER forget_cached_marks;
ALTER TABLE fencing.scopes ENABLE ALWAYS TRIGGER forget_all_cached_marks;

-- Marks of a Citus cluster (src/state/cluster_marks.c, src/marks/cluster_apply.c):
-- fencing.distribute_marks() makes fencing.cluster_marks, a reference table
-- with a copy on every node; the coordinator writes each change of a
-- scope's row into it in the changing transaction, and the trigger on
-- each node's copy takes that node's exclusive scope lock and writes the
-- node's own row.  Made outside the extension's script: Citus distributes
-- no table whose trigger belongs to an extension.
CREATE FUNCTION fencing.apply_cluster_mark()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fencing_apply_cluster_mark'
LANGUAGE C;
-- Not API: a trigger made by hand on another table would raise any scope
-- (it refuses to act anywhere but on fencing.cluster_marks, too).
REVOKE ALL ON FUNCTION fencing.apply_cluster_mark() FROM PUBLIC;
COMMENT ON FUNCTION fencing.apply_cluster_mark() IS
'Trigger function of fencing.cluster_marks on each node of a Citus cluster: takes the scope''s lock exclusively (waits for the node''s writers of the scope) and makes the node''s row of the scope what the coordinator fed.';

-- This node's part in a Citus cluster, recorded once it is known
-- (src/state/citus_shards.c reads it, src/marks/cluster_apply.c and
-- fencing.distribute_marks() write it): a node fed the coordinator's marks
-- is a worker for good, whatever Citus's metadata says later
-- (stop_metadata_sync_to_node() makes a worker's group 0): it never issues
-- terms or leases nor changes a mark by itself.  fed_via is the local
-- placement of fencing.cluster_marks through which the node last took every
-- scope: a node whose placement Citus dropped (disabled, removed) or
-- replaced (activated, added again: Citus copies the rows, firing no
-- trigger) has missed feeds, and refuses writes by scope until the
-- coordinator feeds it again.  fed_start is the start of the server that
-- recorded the row: with fencing.citus_worker_start = 'refuse' a worker
-- started since (maybe disabled while it was down) refuses them too.
CREATE TABLE fencing.node_state (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    role        text NOT NULL CHECK (role OPERATOR(pg_catalog.=) ANY ('{coordinator,worker}'::text[])),
    fed_via     oid,
    recorded_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    fed_start   timestamptz,
    lease       interval,
    lease_from  timestamptz,
    lease_offer uuid,
    lease_offered_at timestamptz
);
COMMENT ON TABLE fencing.node_state IS
'This node''s role in a Citus cluster (coordinator or worker), recorded when the coordinator first distributes or feeds its marks; a worker stays one whatever Citus''s metadata says later. fed_via: the local placement of fencing.cluster_marks through which a worker last took every scope (a placement Citus dropped or replaced since means missed feeds: writes by scope are refused). fed_start: the start of the server that recorded it (fencing.citus_worker_start = refuse: a worker started since refuses writes by scope until fed again). lease, lease_from: the feed lease from the coordinator (NULL: none), which runs out at lease_from + lease on this node''s clock (writes by scope are refused from then); lease_offer, lease_offered_at: the offer the next renewal may acknowledge. Written only by the extension.';
SELECT pg_catalog.pg_extension_config_dump('fencing.node_state', '');
REVOKE ALL ON fencing.node_state FROM PUBLIC;

CREATE FUNCTION fencing.cluster_node_marks()
RETURNS text
AS 'MODULE_PATHNAME', 'fencing_cluster_node_marks'
LANGUAGE C STABLE;
REVOKE ALL ON FUNCTION fencing.cluster_node_marks() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fencing.cluster_node_marks() TO pg_monitor;
COMMENT ON FUNCTION fencing.cluster_node_marks() IS
'On a Citus worker whose marks the coordinator distributes: why the node''s marks are not current (it missed feeds while disabled or removed, or was never fed), in which case it refuses every write by scope; NULL when they are current, and on any other node. fencing.health reports it.';

-- The guard of the coordinator's cluster functions (distribute_marks(), the
-- feed lease's): Citus is installed in this database, and this node is its
-- coordinator (group 0, and never fed as a worker).
CREATE FUNCTION fencing.require_citus_coordinator(caller text, hint text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus') THEN
        RAISE EXCEPTION '% needs the citus extension in this database', caller
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = hint;
    END IF;
    IF (SELECT groupid FROM pg_catalog.pg_dist_local_group) OPERATOR(pg_catalog.<>) 0
       OR EXISTS (SELECT 1 FROM fencing.node_state WHERE role OPERATOR(pg_catalog.=) 'worker') THEN
        RAISE EXCEPTION '% runs on the Citus coordinator only', caller
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'This node is a worker (in Citus''s metadata, or recorded in fencing.node_state once fed): it takes its marks from the coordinator.';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION fencing.require_citus_coordinator(text, text) FROM PUBLIC;
COMMENT ON FUNCTION fencing.require_citus_coordinator(text, text) IS
'Not API: raises unless Citus is installed here and this node is its coordinator; called by distribute_marks() and the feed lease''s functions.';

CREATE FUNCTION fencing.distribute_marks()
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    fed bigint;
BEGIN
    PERFORM fencing.require_citus_coordinator('fencing.distribute_marks()',
        'Marks are distributed on a Citus cluster only; a single node keeps its own.');
    IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.<>) 'read committed' THEN
        RAISE EXCEPTION 'fencing.distribute_marks() runs in READ COMMITTED only'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'It must read every scope as committed after it has locked fencing.scopes.';
    END IF;
    -- this node is the coordinator, for good
    INSERT INTO fencing.node_state (role) VALUES ('coordinator') ON CONFLICT (only_row) DO NOTHING;
    IF pg_catalog.to_regclass('fencing.cluster_marks') IS NULL THEN
        CREATE TABLE fencing.cluster_marks (
            scope  text PRIMARY KEY,
            mark   bigint NOT NULL,
            owner  name NOT NULL,
            tokens text NOT NULL,
            exact  boolean NOT NULL,
            grants text[] NOT NULL
        );
        COMMENT ON TABLE fencing.cluster_marks IS
        'Every scope of the Citus cluster as its coordinator has it (mark, owner, kind, grants as privilege:role), on every node (a reference table); written by the coordinator in each transaction that changes a scope, read by each node''s trigger fencing.apply_cluster_mark().';
        REVOKE ALL ON fencing.cluster_marks FROM PUBLIC;
        CREATE TRIGGER apply_cluster_mark BEFORE INSERT OR UPDATE ON fencing.cluster_marks
            FOR EACH ROW EXECUTE FUNCTION fencing.apply_cluster_mark();
        ALTER TABLE fencing.cluster_marks ENABLE ALWAYS TRIGGER apply_cluster_mark;
        PERFORM pg_catalog.set_config('citus.enable_unsafe_triggers', 'on', true);
        PERFORM pg_catalog.create_reference_table('fencing.cluster_marks');
    END IF;
    -- a node added since has no copy yet (Citus copies reference tables
    -- without firing their triggers: the feed below writes its scopes)
    PERFORM pg_catalog.replicate_reference_tables('block_writes');
    -- each node creates the fence triggers of the shards it gets as the
    -- table's owner: what protect() granted, on every node, new ones too
    PERFORM pg_catalog.run_command_on_all_nodes(
                pg_catalog.format('GRANT EXECUTE ON FUNCTION fencing.fence_trigger() TO %I', r.rolname))
       FROM pg_catalog.pg_roles AS r
      WHERE NOT r.rolsuper
        AND r.oid IN (SELECT c.relowner FROM pg_catalog.pg_trigger AS t
                        JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
                       WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure);
    -- every scope the coordinator has, as committed once no change of a
    -- scope is in flight (a reset read before it commits would be undone),
    -- to every node (a node's writers of each scope are waited for there)
    LOCK TABLE fencing.scopes IN SHARE MODE;
    INSERT INTO fencing.cluster_marks AS c (scope, mark, owner, tokens, exact, grants)
        SELECT s.scope, s.mark,
               pg_catalog.pg_get_userbyid(COALESCE(s.owner, r.relowner)),
               COALESCE(s.tokens, 'external'), false,
               COALESCE((SELECT pg_catalog.array_agg(g.privilege OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||)
                                    CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'public'
                                         ELSE pg_catalog.pg_get_userbyid(g.grantee)::pg_catalog.text END
                                    ORDER BY g.privilege, g.grantee)
                           FROM fencing.scope_grants AS g
                          WHERE g.scope OPERATOR(pg_catalog.=) s.scope), '{}')
          FROM fencing.scopes AS s, pg_catalog.pg_class AS r
         WHERE r.oid OPERATOR(pg_catalog.=) 'fencing.scopes'::pg_catalog.regclass
    ON CONFLICT (scope) DO UPDATE SET mark = excluded.mark, owner = excluded.owner,
                                      tokens = excluded.tokens, exact = excluded.exact,
                                      grants = excluded.grants;
    GET DIAGNOSTICS fed = ROW_COUNT;
    RETURN fed;
END
$$;
REVOKE ALL ON FUNCTION fencing.distribute_marks() FROM PUBLIC;
COMMENT ON FUNCTION fencing.distribute_marks() IS
'On the coordinator of a Citus cluster (superuser): makes fencing.cluster_marks, a reference table, and feeds it every scope; from then on scopes (marks, owners, grants) change only on the coordinator, for every node at once, and no write raises a mark or creates a scope. Run again to feed every scope again (after a node was added). Returns the number of scopes fed.';

-- The feed lease of a Citus cluster (opt-in; src/state/cluster_marks.c says
-- why it holds): a worker cut off from the coordinator by the network and
-- then disabled no longer gets the takeovers, and nothing tells it.  Under a
-- lease each worker refuses writes by scope once its lease, renewed by
-- fencing.renew_cluster_lease() on the coordinator, has run out on its own
-- clock; a takeover on the coordinator waits, after a node that may hold a
-- lease stopped being an active primary, until that lease has surely run
-- out (longest * 1.1 + 1 s).  The coordinator's setting: lease, the one
-- renewals grant ('0': none), and longest, the longest ever set (a cut-off
-- worker may still hold it).  set_in: the transaction that set it (a renewal
-- in that same transaction would let a worker hold a lease the coordinator
-- has not committed).
CREATE TABLE fencing.cluster_lease (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    lease    interval NOT NULL,
    longest  interval NOT NULL,
    set_in   xid8
);
COMMENT ON TABLE fencing.cluster_lease IS
'The feed lease of a Citus cluster, on its coordinator (fencing.set_cluster_lease()): lease, what fencing.renew_cluster_lease() grants every active worker (''0'': none); longest, the longest lease ever set, which a takeover waits out after a node that may hold one was disabled or removed. Written only by the extension.';
SELECT pg_catalog.pg_extension_config_dump('fencing.cluster_lease', '');
REVOKE ALL ON fencing.cluster_lease FROM PUBLIC;

-- Every worker a renewal reached, or tried to (recorded before the call):
-- it may hold a lease.  lapsed_at: when a change of a scope first saw it no
-- active primary (disabled, removed); a renewal clears it.  offer: the
-- worker's last offer the coordinator has received, which the next renewal
-- acknowledges (the worker's lease starts at that offer).
CREATE TABLE fencing.cluster_lease_nodes (
    nodename  text NOT NULL,
    nodeport  integer NOT NULL,
    lapsed_at timestamptz,
    offer     uuid,
    PRIMARY KEY (nodename, nodeport)
);
COMMENT ON TABLE fencing.cluster_lease_nodes IS
'On a Citus coordinator: every worker that may hold a feed lease. lapsed_at: when a change of a scope first saw it no longer an active primary (a takeover waits out its lease from then); offer: its last offer received by a renewal, acknowledged by the next. Written only by the extension.';
SELECT pg_catalog.pg_extension_config_dump('fencing.cluster_lease_nodes', '');
REVOKE ALL ON fencing.cluster_lease_nodes FROM PUBLIC;

CREATE FUNCTION fencing.take_cluster_lease(lease interval, acknowledged uuid[])
RETURNS jsonb
AS 'MODULE_PATHNAME', 'fencing_take_cluster_lease'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
-- Not API: the coordinator's renewal calls it as a superuser.
REVOKE ALL ON FUNCTION fencing.take_cluster_lease(interval, uuid[]) FROM PUBLIC;
COMMENT ON FUNCTION fencing.take_cluster_lease(interval, uuid[]) IS
'On a Citus worker, called by the coordinator''s fencing.renew_cluster_lease(): takes the feed lease (''0'': none) from the time of its own offer named in acknowledged, records a new offer and returns {offer, granted, lease, lease_from}; NULL on a worker never fed. Refused on the coordinator.';

CREATE FUNCTION fencing.set_cluster_lease(lease interval)
RETURNS interval
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    longest interval;
BEGIN
    PERFORM fencing.require_citus_coordinator('fencing.set_cluster_lease()', 'The feed lease is a Citus cluster''s.');
    IF lease IS NULL OR pg_catalog.date_part('month', lease) OPERATOR(pg_catalog.<>) 0
       OR pg_catalog.date_part('day', lease) OPERATOR(pg_catalog.<>) 0
       OR lease OPERATOR(pg_catalog.<) '0'::pg_catalog.interval THEN
        RAISE EXCEPTION 'invalid feed lease'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A feed lease is a duration of zero or more in hours, minutes and seconds, without days or months; ''0'' turns it off.';
    END IF;
    INSERT INTO fencing.cluster_lease AS c (only_row, lease, longest, set_in)
         VALUES (true, lease, lease, pg_catalog.pg_current_xact_id())
    ON CONFLICT (only_row) DO UPDATE
        SET lease = excluded.lease,
            longest = GREATEST(c.longest, excluded.longest),
            set_in = excluded.set_in
    RETURNING c.longest INTO longest;
    RETURN longest;
END
$$;
REVOKE ALL ON FUNCTION fencing.set_cluster_lease(interval) FROM PUBLIC;
COMMENT ON FUNCTION fencing.set_cluster_lease(interval) IS
'On the coordinator of a Citus cluster (superuser): sets the feed lease that fencing.renew_cluster_lease() grants every active worker (''0'': none, the default). Commit it before renewing. Returns the longest lease ever set, which a takeover waits out (times 1.1, plus 1 s) after a node was disabled or removed.';

CREATE FUNCTION fencing.renew_cluster_lease()
RETURNS TABLE (nodename text, nodeport integer, renewed boolean, detail text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    setting record;
    acked uuid[];
    r record;
    answer jsonb;
BEGIN
    PERFORM fencing.require_citus_coordinator('fencing.renew_cluster_lease()', 'The feed lease is a Citus cluster''s.');
    -- one renewal at a time
    SELECT c.lease, c.set_in INTO setting FROM fencing.cluster_lease AS c FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no feed lease is set'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set one with fencing.set_cluster_lease(), and commit, first.';
    END IF;
    IF setting.set_in OPERATOR(pg_catalog.=) pg_catalog.pg_current_xact_id_if_assigned() THEN
        RAISE EXCEPTION 'the feed lease was set in this transaction'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'No worker may hold a lease before the coordinator has committed it: a takeover waits out the longest lease committed.',
                  HINT = 'Commit fencing.set_cluster_lease(), then renew.';
    END IF;
    -- citus_disable_node, citus_remove_node and citus_activate_node take
    -- EXCLUSIVE on pg_dist_node: each waits for this renewal to end
    LOCK TABLE pg_catalog.pg_dist_node IN ROW SHARE MODE;
    -- a node that may hold a lease and is no active primary any more: its
    -- lapse is recorded here too, and commits with the renewal, so that a
    -- takeover cancelled during its wait (statement_timeout), whose own
    -- record rolls back with it, does not start the wait over on every try
    UPDATE fencing.cluster_lease_nodes AS l SET lapsed_at = pg_catalog.clock_timestamp()
     WHERE l.lapsed_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_node AS d
                        WHERE d.nodename OPERATOR(pg_catalog.=) l.nodename
                          AND d.nodeport OPERATOR(pg_catalog.=) l.nodeport
                          AND d.isactive AND d.noderole OPERATOR(pg_catalog.=) 'primary');
    -- every worker that may hold a lease, recorded before any call reaches it
    INSERT INTO fencing.cluster_lease_nodes AS l (nodename, nodeport)
        SELECT n.nodename, n.nodeport FROM pg_catalog.pg_dist_node AS n
         WHERE n.isactive AND n.noderole OPERATOR(pg_catalog.=) 'primary'
           AND n.groupid OPERATOR(pg_catalog.<>) 0
    ON CONFLICT ON CONSTRAINT cluster_lease_nodes_pkey DO UPDATE SET lapsed_at = NULL;
    -- the offers received by committed renewals: a worker's lease starts at its own
    SELECT pg_catalog.array_agg(l.offer) INTO acked
      FROM fencing.cluster_lease_nodes AS l WHERE l.offer IS NOT NULL;
    FOR r IN SELECT * FROM pg_catalog.run_command_on_workers(
                 pg_catalog.format('SELECT fencing.take_cluster_lease(%L::pg_catalog.interval, %L::pg_catalog.uuid[])',
                                   setting.lease, COALESCE(acked, '{}'::pg_catalog.uuid[])))
    LOOP
        nodename := r.nodename;
        nodeport := r.nodeport;
        renewed := false;
        IF NOT r.success THEN
            detail := 'not renewed: ' OPERATOR(pg_catalog.||) r.result;
        ELSIF r.result IS NULL OR r.result OPERATOR(pg_catalog.=) '' THEN
            detail := 'not renewed: the node was never fed the coordinator''s marks (run fencing.distribute_marks())';
        ELSE
            answer := r.result::pg_catalog.jsonb;
            UPDATE fencing.cluster_lease_nodes AS l SET offer = (answer OPERATOR(pg_catalog.->>) 'offer')::pg_catalog.uuid
             WHERE l.nodename OPERATOR(pg_catalog.=) r.nodename AND l.nodeport OPERATOR(pg_catalog.=) r.nodeport;
            renewed := (answer OPERATOR(pg_catalog.->>) 'granted')::pg_catalog.bool;
            detail := CASE
                WHEN setting.lease OPERATOR(pg_catalog.=) '0'::pg_catalog.interval THEN 'no lease: the node holds none now'
                WHEN renewed THEN pg_catalog.format('lease %s from %s (on the node''s clock)',
                                                   answer OPERATOR(pg_catalog.->>) 'lease',
                                                   answer OPERATOR(pg_catalog.->>) 'lease_from')
                ELSE 'offer recorded: the next renewal grants the lease' END;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION fencing.renew_cluster_lease() FROM PUBLIC;
COMMENT ON FUNCTION fencing.renew_cluster_lease() IS
'On the coordinator of a Citus cluster (superuser): renews the feed lease (fencing.set_cluster_lease()) on every active worker; run it every third of the lease (pg_cron). A worker holds the lease from its second renewal on, measured from its offer at the first; a worker not renewed refuses writes by scope once its lease runs out. One row per worker: renewed, and why not.';
