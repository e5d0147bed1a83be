-- 10_clock.sql: the epoch clock and the terms it issues.
-- fence_next_epoch(scope) takes the next value of fencing.epoch_seq (kept
-- above the scope's mark and latest term, and inside this timeline's band:
-- src/clock/), records it in fencing.terms and makes it the scope's mark
-- (fencing.scopes, 20_marks.sql); its commit is flushed, and waits for the
-- synchronous standby (src/durability/).

-- The epoch clock: every term of every scope comes from here.
CREATE SEQUENCE fencing.epoch_seq AS bigint MINVALUE 1 NO CYCLE;
COMMENT ON SEQUENCE fencing.epoch_seq IS 'The epoch clock: every term fence_next_epoch() issues comes from it.';
-- kept by pg_dump, so a dump/restore keeps the clock
SELECT pg_catalog.pg_extension_config_dump('fencing.epoch_seq', '');
REVOKE ALL ON fencing.epoch_seq FROM PUBLIC;

-- Every term ever issued, who took it and when.  A scope's terms are unique
-- and increasing per scope, not across scopes.  Old terms are deleted by
-- fencing.prune_terms() (90_retention.sql) and by fencing.term_retention
-- (src/clock/term_retention.c).
CREATE TABLE fencing.terms (
    epoch     bigint NOT NULL,
    scope     text COLLATE "C" NOT NULL,
    holder    text NOT NULL,
    issued_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    issued_by name NOT NULL,
    CONSTRAINT terms_pkey PRIMARY KEY (scope, epoch)
);
-- One more index, on (scope, issued_at): what monitoring reads of a scope's
-- terms (fencing.scope_stats' terms_last_hour) and what fencing.term_retention
-- deletes are ranges of it, so their cost is the range, not the scope's
-- history.  Every term issued writes one entry per index; the extension
-- looks terms up by scope and epoch otherwise (an issued token, ZF003).
-- 1.2 to 1.3 had one on epoch alone.
CREATE INDEX terms_scope_issued_at ON fencing.terms (scope, issued_at);
COMMENT ON TABLE fencing.terms IS 'Every term issued, with its holder and time. Written only by the extension; old terms are deleted by fencing.prune_terms() and, when fencing.term_retention is set, as their scope is issued new ones.';
SELECT pg_catalog.pg_extension_config_dump('fencing.terms', '');
-- readable row by row as the scope's privileges say (50_security.sql)
REVOKE ALL ON fencing.terms FROM PUBLIC;
GRANT SELECT ON fencing.terms TO PUBLIC;

CREATE FUNCTION fencing.fence_next_epoch(scope text, holder text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_fence_next_epoch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.fence_next_epoch(text, text) IS
'Issues a new term for a scope on leader takeover: strictly greater than every term of the scope and its mark, durable, and the scope''s new mark. Needs the lead privilege on the scope; creates a missing scope (tokens issued) for roles allowed to create scopes.';

-- Terms carry the timeline: fence_next_epoch() never issues a term below
-- (timeline - 1) * 2^40, so a promoted standby's terms are above every term
-- of the timelines before it (src/clock/term_band.c).  Terms issued on
-- timeline 1, before 1.2 too, are below 2^40 and keep their place.

CREATE FUNCTION fencing.clock_timeline(OUT timeline bigint, OUT term_floor bigint,
                                       OUT term_limit bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_clock_timeline'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION fencing.clock_timeline() IS
'The timeline of this server (the replayed one on a standby) and its band of terms: no term issued on it is below term_floor; a scope whose mark or latest term is at or above term_limit is outside the band, and its terms are not protected against reissue by an asynchronous failover.';
