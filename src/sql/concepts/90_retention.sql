-- 90_retention.sql: deleting old terms from fencing.terms.
-- Retention of fencing.terms.  The next term of a scope is computed from
-- its row in fencing.scopes (mark, latest term) and the sequence, never from
-- fencing.terms, so deleting terms cannot lower it (I1).  Kept: the newest
-- keep_per_scope terms of each scope (at least its latest), every term at or
-- above the scope's mark (a write in an 'issued' scope may still raise the
-- mark to it: ZF003 looks it up here), the term of each lease, and every
-- term younger than older_than.
CREATE FUNCTION fencing.prune_terms(older_than interval DEFAULT '90 days',
                                    keep_per_scope integer DEFAULT 100)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    deleted pg_catalog.int8;
BEGIN
    IF older_than IS NULL OR keep_per_scope IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed',
            MESSAGE = 'older_than and keep_per_scope must not be null';
    END IF;
    IF older_than OPERATOR(pg_catalog.<) '0'::pg_catalog.interval THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'older_than must not be negative';
    END IF;
    IF keep_per_scope OPERATOR(pg_catalog.<) 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = pg_catalog.format('keep_per_scope must be at least 1, not %s', keep_per_scope),
            DETAIL = 'The latest term of every scope is always kept.';
    END IF;
    -- no mark, latest term or lease moves while we decide: each of them
    -- updates its scope's row, which waits for this transaction
    PERFORM 1 FROM fencing.scopes FOR SHARE;
    PERFORM 1 FROM fencing.leases FOR SHARE;
    DELETE FROM fencing.terms AS t
     USING (SELECT r.scope, r.epoch,
                   pg_catalog.row_number() OVER (PARTITION BY r.scope ORDER BY r.epoch DESC) AS newer
              FROM fencing.terms r) AS ranked,
           fencing.scopes AS s
     WHERE ranked.scope OPERATOR(pg_catalog.=) t.scope
       AND ranked.epoch OPERATOR(pg_catalog.=) t.epoch
       AND ranked.newer OPERATOR(pg_catalog.>) keep_per_scope
       AND s.scope OPERATOR(pg_catalog.=) t.scope
       AND t.epoch OPERATOR(pg_catalog.<) s.mark
       AND t.epoch OPERATOR(pg_catalog.<) s.epoch
       AND t.issued_at OPERATOR(pg_catalog.<) (pg_catalog.now() OPERATOR(pg_catalog.-) older_than)
       AND NOT EXISTS (SELECT 1 FROM fencing.leases AS l
                        WHERE l.scope OPERATOR(pg_catalog.=) t.scope
                          AND l.term OPERATOR(pg_catalog.=) t.epoch);
    GET DIAGNOSTICS deleted = ROW_COUNT;
    RETURN deleted;
END
$fn$;
REVOKE ALL ON FUNCTION fencing.prune_terms(interval, integer) FROM PUBLIC;
COMMENT ON FUNCTION fencing.prune_terms(interval, integer) IS
'Deletes terms older than older_than from fencing.terms, keeping the newest keep_per_scope of each scope, every term at or above its mark and every lease''s term; the next term never depends on them. For the extension''s owner and superusers. Returns the number deleted.';
