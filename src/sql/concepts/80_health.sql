-- 80_health.sql: the health view, one row per finding that weakens fencing.
-- Unsafe settings, replicas without a synchronous standby, a missing
-- synchronous standby, protected tables whose fence does not work
-- (protected_tables, 40_trigger.sql), unfenced inheritance children, leases
-- held by fenced holders, scopes not fenced since a promotion or a move, marks far
-- above the clock, scopes and the epoch sequence outside the clock's band
-- (no term issued: src/clock/epoch_clock.c), scopes owned by (and grants to) dropped roles, a server
-- that does not preload the library, roles other than superusers that may
-- set session_replication_role.  For a DBA to run and alert on;
-- readable by pg_monitor.

CREATE VIEW fencing.health AS
WITH settings AS (
    SELECT pg_catalog.current_setting('fsync') AS fsync,
           pg_catalog.current_setting('full_page_writes') AS full_page_writes,
           (SELECT s.reset_val FROM pg_catalog.pg_settings s
             WHERE s.name OPERATOR(pg_catalog.=) 'synchronous_commit') AS synchronous_commit,
           pg_catalog.current_setting('synchronous_standby_names') AS sync_names,
           -- the library in shared_preload_libraries, or in this session's session_preload_libraries
           EXISTS (SELECT 1
                     FROM pg_catalog.pg_settings ps,
                          pg_catalog.unnest(pg_catalog.string_to_array(ps.setting, ',')) AS l(name)
                    WHERE pg_catalog.regexp_replace(pg_catalog.btrim(l.name, ' "'), '^.*/', '')
                          OPERATOR(pg_catalog.=) ANY ('{fencing,fencing.so}'::text[])
                      AND ps.name OPERATOR(pg_catalog.=) ANY ('{shared_preload_libraries,session_preload_libraries}'::text[]))
           -- a role that may not read the setting sees no finding
           OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_settings ps
                           WHERE ps.name OPERATOR(pg_catalog.=) 'shared_preload_libraries') AS preloaded
), replicas AS (
    SELECT pg_catalog.count(*) AS connected,
           pg_catalog.count(*) FILTER (WHERE r.sync_state OPERATOR(pg_catalog.=) ANY ('{sync,quorum}'::text[])) AS sync
      FROM pg_catalog.pg_stat_replication r
)
SELECT f.severity, f."check", f.object, f.detail, f.action
FROM (
    SELECT 'critical'::text AS severity, 'fsync'::text AS "check", 'fsync'::text AS object,
           'fsync is off: a crash can lose committed terms and marks, and terms are handed out again'::text AS detail,
           'Set fsync = on.'::text AS action
      FROM settings WHERE fsync OPERATOR(pg_catalog.=) 'off'
    UNION ALL
    SELECT 'critical', 'full_page_writes', 'full_page_writes',
           'full_page_writes is off: a crash during a page write can corrupt fencing.scopes and fencing.terms',
           'Set full_page_writes = on.'
      FROM settings WHERE full_page_writes OPERATOR(pg_catalog.=) 'off'
    UNION ALL
    SELECT 'warning', 'library not preloaded', 'shared_preload_libraries',
           'fencing is not in shared_preload_libraries: a session loads it at its first fenced write, in the middle of that statement, which the fence then cannot see; a write it cannot judge without the statement (an UPDATE or MERGE leaving the row''s own token in the token column, with no declared token) is refused with SQLSTATE 55000 and must be retried',
           'Add fencing to shared_preload_libraries (restart), or to session_preload_libraries.'
      FROM settings WHERE NOT preloaded
    UNION ALL
    SELECT 'warning', 'synchronous_commit', 'synchronous_commit',
           pg_catalog.format('synchronous_commit is %s for new sessions: terms and marks are still flushed (the extension forces it), but accepted row writes may be lost by a crash',
                             synchronous_commit),
           'Set synchronous_commit = on (or remote_apply) in postgresql.conf.'
      FROM settings WHERE synchronous_commit OPERATOR(pg_catalog.=) ANY ('{off,local}'::text[])
    UNION ALL
    SELECT 'warning', 'replicas without a synchronous standby', 'synchronous_standby_names',
           pg_catalog.format('%s standby(s) connected, none synchronous: a failover to one of them can lose terms and marks the primary committed, and hand the same term to two leaders',
                             r.connected),
           'List the standbys in synchronous_standby_names (e.g. ''ANY 1 (s1, s2)''), or with Patroni set synchronous_mode (and synchronous_mode_strict).'
      FROM replicas r WHERE r.connected OPERATOR(pg_catalog.>) 0 AND r.sync OPERATOR(pg_catalog.=) 0
    UNION ALL
    SELECT 'critical', 'synchronous standby not connected', 'synchronous_standby_names',
           pg_catalog.format('synchronous_standby_names is %L but no synchronous standby is connected: every takeover and raise of a mark waits at commit until one is (statement_timeout does not apply), and a cancelled wait returns a term that may not survive a failover',
                             s.sync_names),
           'Bring a standby listed in synchronous_standby_names back, or list several (''ANY 1 (s1, s2)'').'
      FROM settings s, replicas r
     WHERE s.sync_names OPERATOR(pg_catalog.<>) '' AND r.sync OPERATOR(pg_catalog.=) 0
    UNION ALL
    SELECT 'critical', 'fence not working', p.relation::pg_catalog.text,
           pg_catalog.format('protected table %s: %s', p.relation, p.problem),
           'Re-run fencing.protect() on the table: it makes every fence trigger again, enabled ALWAYS.'
      FROM fencing.protected_tables p WHERE p.problem IS NOT NULL
    UNION ALL
    SELECT 'warning', 'may set session_replication_role', r.rolname::pg_catalog.text,
           pg_catalog.format('role %s is not a superuser but may set session_replication_role (GRANT SET ON PARAMETER): under replica, triggers not enabled ALWAYS (foreign key checks included) do not fire for its writes; the fence refuses its writes to protected tables (42501)',
                             r.rolname),
           pg_catalog.format('Unless it is a replication tool''s role that needs it: REVOKE SET ON PARAMETER session_replication_role FROM %I;', r.rolname)
      FROM pg_catalog.pg_roles r
     WHERE NOT r.rolsuper
       AND pg_catalog.has_parameter_privilege(r.oid, 'session_replication_role', 'SET')
    UNION ALL
    SELECT 'critical', 'unfenced inheritance child', i.inhrelid::pg_catalog.regclass::pg_catalog.text,
           pg_catalog.format('%s inherits from protected table %s but has no fence trigger: writes to it directly are not fenced',
                             i.inhrelid::pg_catalog.regclass, p.relation),
           pg_catalog.format('Protect it like its parent: SELECT fencing.protect(%L, %L, ...) with the same scope or scope column; or attach it as a partition instead.',
                             i.inhrelid::pg_catalog.regclass::pg_catalog.text, p.token_column)
      FROM fencing.protected_tables p
      JOIN pg_catalog.pg_class pc ON pc.oid OPERATOR(pg_catalog.=) p.relation::pg_catalog.oid
      JOIN pg_catalog.pg_inherits i ON i.inhparent OPERATOR(pg_catalog.=) p.relation::pg_catalog.oid
     WHERE pc.relkind OPERATOR(pg_catalog.<>) 'p'
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t
                        WHERE t.tgrelid OPERATOR(pg_catalog.=) i.inhrelid
                          AND t.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
                          AND t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure)
    UNION ALL
    SELECT 'warning', 'lease held by a fenced holder', l.scope,
           pg_catalog.format('holder %s holds the lease of scope %s with term %s until %s, but the scope''s mark is %s: its writes are rejected, and the next acquire_lease grants a new term',
                             l.holder, l.scope, l.term, l.expires_at, s.mark),
           'Nothing to repair: the holder must acquire the lease again; find out what fenced it (fencing.terms).'
      FROM fencing.leases l
      JOIN fencing.scopes s ON s.scope OPERATOR(pg_catalog.=) l.scope
     WHERE l.released_at IS NULL AND l.expires_at OPERATOR(pg_catalog.>) pg_catalog.clock_timestamp()
       AND l.term OPERATOR(pg_catalog.<>) 0 AND s.mark OPERATOR(pg_catalog.>) l.term
    UNION ALL
    SELECT 'critical', 'scope owned by a dropped role', s.scope,
           pg_catalog.format('scope %s is owned by role OID %s, which no longer exists: a role created later with that OID would own the scope (Postgres records no dependency on it)',
                             s.scope, s.owner::pg_catalog.oid),
           pg_catalog.format('Give the scope to a role, as a superuser: SELECT fencing.alter_scope_owner(%L, ''new_owner'');', s.scope)
      FROM fencing.scopes s
     WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) s.owner::pg_catalog.oid)
    UNION ALL
    SELECT 'warning', 'grant to a dropped role', g.scope,
           pg_catalog.format('scope %s grants %s to role OID %s, which no longer exists: a role created later with that OID would hold it',
                             g.scope, g.privilege, g.grantee::pg_catalog.oid),
           pg_catalog.format('Remove the grant, as a superuser: DELETE FROM fencing.scope_grants WHERE scope = %L AND grantee = %s;',
                             g.scope, g.grantee::pg_catalog.oid)
      FROM fencing.scope_grants g
     WHERE g.grantee::pg_catalog.oid OPERATOR(pg_catalog.<>) 0
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) g.grantee::pg_catalog.oid)
    UNION ALL
    SELECT 'warning',
           CASE WHEN k.state OPERATOR(pg_catalog.=) 'moves' THEN 'scope not fenced since the move'
                ELSE 'scope not fenced since the promotion' END,
           s.scope,
           CASE WHEN k.state OPERATOR(pg_catalog.=) 'moves'
                THEN pg_catalog.format('scope %s has mark %s, below the floor %s of the band this copy of the database moves to (restored, upgraded or copied from another server): if its source issued terms after the copy was made, a writer the source had fenced by such a term is admitted until the scope''s next term',
                                       s.scope, s.mark, c.term_floor)
                ELSE pg_catalog.format('scope %s has mark %s, below the floor %s of this server''s timeline %s: if the failover lost commits, a writer the old primary had fenced by a lost term is admitted until the scope''s next term',
                                       s.scope, s.mark, c.term_floor, c.timeline) END,
           'Fence every term of the earlier timelines, as a superuser: SELECT fencing.fence_older_timelines(); (or take a new term in the scope).'
      FROM fencing.scopes s, fencing.clock_timeline() c, fencing.clock_state() k
     WHERE s.tokens OPERATOR(pg_catalog.=) 'issued' AND s.mark OPERATOR(pg_catalog.<) c.term_floor
    UNION ALL
    SELECT 'critical', 'Citus worker marks not current', 'fencing.cluster_marks',
           pg_catalog.format('this Citus worker refuses every write by scope: %s', n.why),
           'On the coordinator, a superuser runs: SELECT fencing.distribute_marks(); (it feeds every scope to every node)'
      FROM (SELECT fencing.cluster_node_marks() AS why) n
     WHERE n.why IS NOT NULL
    UNION ALL
    SELECT CASE c.state WHEN 'awaits confirmation' THEN 'critical' ELSE 'warning' END,
           'clock not confirmed since an unclean start', 'fencing.clock',
           pg_catalog.format('the server started from a data directory that was not shut down cleanly (a crash, or a restored file-system snapshot or copy) and issues terms on timeline %s after its crash recovery: if it is a copy, it can issue again the terms the original issued after the copy was made%s',
                             c.timeline,
                             CASE c.state WHEN 'awaits confirmation'
                                  THEN ' (fencing.clock_unclean_start = confirm: no term is issued until a superuser confirms)'
                                  ELSE '' END),
           'Once no other copy of this database issues terms, a superuser confirms: SELECT fencing.confirm_clock();'
      FROM fencing.clock_state() c
     WHERE c.state OPERATOR(pg_catalog.=) ANY ('{unconfirmed,awaits confirmation}'::text[])
    UNION ALL
    SELECT 'critical', 'clock not confirmed since a promotion', 'fencing.clock',
           pg_catalog.format('the server was promoted since it started and issues terms on timeline %s: a standby promoted onto the same timeline before it (without a shared WAL archive), or a confirmation of the clock it did not replay, could make it issue terms again (fencing.clock_promotion = confirm: no term is issued until a superuser confirms)',
                             c.timeline),
           'Once no other server of this database issues terms on this timeline, a superuser confirms: SELECT fencing.confirm_clock();'
      FROM fencing.clock_state() c
     WHERE c.state OPERATOR(pg_catalog.=) 'awaits confirmation since a promotion'
    UNION ALL
    SELECT CASE WHEN s.mark OPERATOR(pg_catalog.>=) 4611686018427387904 THEN 'critical' ELSE 'warning' END,
           'mark far above the clock', s.scope,
           CASE WHEN s.mark OPERATOR(pg_catalog.>=) 4611686018427387904
                THEN pg_catalog.format('scope %s has mark %s, near the largest bigint: few terms are left (ZF004 at the end)', s.scope, s.mark)
                ELSE pg_catalog.format('scope %s issues terms, but its mark %s is far above its latest term %s: the mark was reset or written directly, not by a term',
                                       s.scope, s.mark, s.epoch)
           END,
           pg_catalog.format('If no writer holds a token that high, its owner repairs it: SELECT fencing.reset_mark(%L, %s);',
                             s.scope, COALESCE(s.epoch, 0))
      FROM fencing.scopes s, fencing.clock_timeline() c
     WHERE s.mark OPERATOR(pg_catalog.>=) 4611686018427387904
        OR (s.tokens OPERATOR(pg_catalog.=) 'issued'
            AND s.mark OPERATOR(pg_catalog.>) 1000000
            AND s.mark OPERATOR(pg_catalog.>) (1000 OPERATOR(pg_catalog.*) GREATEST(s.epoch, c.term_floor, 1)))
    UNION ALL
    -- the clock refuses a term at or above term_limit (ZF007): the next
    -- timeline issues from there after an asynchronous failover.  A scope of
    -- external tokens that never took a term is its lock service's business.
    SELECT CASE s.tokens WHEN 'issued' THEN 'critical' ELSE 'warning' END,
           'scope outside the band', s.scope,
           pg_catalog.format('scope %s has mark %s and latest term %s: its next term would be at or above %s, the limit of the band of terms of timeline %s, where the next timeline issues after an asynchronous failover; fence_next_epoch() and acquire_lease() refuse to issue it (ZF007)',
                             s.scope, s.mark, COALESCE(s.epoch::pg_catalog.text, 'none'), c.term_limit, c.timeline),
           CASE WHEN s.tokens OPERATOR(pg_catalog.<>) 'issued'
                THEN pg_catalog.format('Take this scope''s tokens from its lock service: SELECT fencing.takeover(%L, token); or, if no writer holds a token above %s, its owner lowers the mark into the band: SELECT fencing.reset_mark(%L, %s);',
                                       s.scope, COALESCE(s.epoch, 0), s.scope, COALESCE(s.epoch, 0))
                WHEN s.epoch OPERATOR(pg_catalog.>=) (c.term_limit OPERATOR(pg_catalog.-) 1)
                THEN 'Use another scope name; or, once no other copy of this database issues terms, a superuser moves the clock''s band above every term issued: SELECT fencing.confirm_clock();'
                ELSE pg_catalog.format('If no writer holds a token above %s, its owner lowers the mark into the band: SELECT fencing.reset_mark(%L, %s);',
                                       COALESCE(s.epoch, 0), s.scope, COALESCE(s.epoch, 0))
           END
      FROM fencing.scopes s, fencing.clock_timeline() c
     WHERE (s.tokens OPERATOR(pg_catalog.=) 'issued' OR s.epoch IS NOT NULL)
       AND GREATEST(s.mark, s.epoch) OPERATOR(pg_catalog.>=) (c.term_limit OPERATOR(pg_catalog.-) 1)
    UNION ALL
    SELECT 'critical', 'epoch sequence outside the band', 'fencing.epoch_seq',
           pg_catalog.format('fencing.epoch_seq is at %s: its next value is at or above %s, the limit of the band of terms of timeline %s, so fence_next_epoch() and acquire_lease() refuse to issue any term (ZF007)',
                             q.last_value, c.term_limit, c.timeline),
           pg_catalog.format('Each scope''s terms are kept above its own mark and latest term, whatever the sequence returns: a superuser moves the sequence back into the band: SELECT pg_catalog.setval(''fencing.epoch_seq'', %s);',
                             GREATEST(c.term_floor, 1))
      FROM fencing.epoch_seq q, fencing.clock_timeline() c
     WHERE q.last_value OPERATOR(pg_catalog.>=)
           (c.term_limit OPERATOR(pg_catalog.-) CASE WHEN q.is_called THEN 1 ELSE 0 END)
) f
ORDER BY CASE f.severity WHEN 'critical' THEN 0 ELSE 1 END, f."check", f.object;
COMMENT ON VIEW fencing.health IS
'Findings that weaken fencing, one row each: severity (critical, warning), check, object, detail, action. Unsafe settings, the library not preloaded, replicas without a synchronous standby, a missing synchronous standby, protected tables whose fence does not work, roles other than superusers that may set session_replication_role, unfenced inheritance children, leases held by fenced holders, scopes not fenced since a promotion, a clock not confirmed since an unclean start or a promotion, marks far above the clock, scopes and the epoch sequence outside the clock''s band (no term issued: ZF007), scopes owned by or granted to dropped roles, a Citus worker whose marks are not current. No rows: nothing found. Readable by pg_monitor.';
REVOKE ALL ON fencing.health FROM PUBLIC;
GRANT SELECT ON fencing.health TO pg_monitor;

-- CREATE EXTENSION says when the server does not preload the library.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1
                     FROM pg_catalog.pg_settings ps,
                          pg_catalog.unnest(pg_catalog.string_to_array(ps.setting, ',')) AS l(name)
                    WHERE pg_catalog.regexp_replace(pg_catalog.btrim(l.name, ' "'), '^.*/', '')
                          OPERATOR(pg_catalog.=) ANY ('{fencing,fencing.so}'::text[])
                      AND ps.name OPERATOR(pg_catalog.=) ANY ('{shared_preload_libraries,session_preload_libraries}'::text[]))
       AND EXISTS (SELECT 1 FROM pg_catalog.pg_settings ps
                    WHERE ps.name OPERATOR(pg_catalog.=) 'shared_preload_libraries') THEN
        -- a warning: an extension script runs with client_min_messages
        -- raised to warning, and the server's configuration deserves one
        RAISE WARNING 'fencing is not in shared_preload_libraries'
            USING DETAIL = 'A session then loads the library at its first fenced write, in the middle of that statement, which the fence cannot see: a write it cannot judge without the statement is refused (SQLSTATE 55000) and must be retried.',
                  HINT = 'Add fencing to shared_preload_libraries (restart), or to session_preload_libraries.';
    END IF;
END $$;
