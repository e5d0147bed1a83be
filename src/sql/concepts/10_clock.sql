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
'Issues a new term for a scope on leader takeover: strictly greater than every term of the scope and its mark, inside this timeline''s band (fencing.clock_timeline(); ZF007 when the next term would be at or above term_limit), durable, and the scope''s new mark. Needs the lead privilege on the scope; creates a missing scope (tokens issued) for roles allowed to create scopes.';

-- Terms carry the timeline: fence_next_epoch() never issues a term below
-- (generation + timeline - 1) * 2^40, nor one at or above the next
-- timeline's floor (ZF007), so a promoted standby's terms are above
-- every term of the timelines before it (src/clock/term_band.c; the
-- generation, fencing.clock below, is 0 until the database moves to another
-- cluster).  Terms issued on timeline 1, before 1.2 too, are below 2^40 and
-- keep their place.

CREATE FUNCTION fencing.clock_timeline(OUT timeline bigint, OUT term_floor bigint,
                                       OUT term_limit bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_clock_timeline'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.clock_timeline() IS
'The timeline of this server (the replayed one on a standby) and its band of terms in the clock''s generation (fencing.clock_state()): it issues terms term_floor to term_limit - 1 (the next timeline issues from term_limit on). A scope whose mark or latest term is at or above term_limit - 1 is outside the band: its next term would be term_limit or more, which an asynchronous failover could issue again, so fence_next_epoch() and lease grants refuse it (ZF007).';

-- The clock's generation: the band of timeline T is G + T - 1, for the
-- generation G kept here.  One row per claim (none before the first term),
-- inserted only by the extension, never updated: who issued in which band
-- (system identifier, database, this table's OID, timeline); the latest
-- claim is in force.  A term issued by any other server (after pg_upgrade,
-- a restore into a new cluster or database, a copy) or on a lower timeline
-- moves the generation above every band used and 16 timelines more, its
-- floor later by the time since the claim, in the issuing transaction
-- (src/clock/clock_generation.c).  Dumped, copied by pg_upgrade and
-- replicated with the data, so the generation only grows.
CREATE TABLE fencing.clock (
    generation        bigint NOT NULL CHECK (generation OPERATOR(pg_catalog.>=) 0),
    band_offset       bigint NOT NULL DEFAULT 0
                      CHECK (band_offset OPERATOR(pg_catalog.>=) 0
                             AND band_offset OPERATOR(pg_catalog.<) 1099511627776),
    system_identifier bigint NOT NULL,
    database_oid      oid NOT NULL,
    clock_oid         oid NOT NULL,
    timeline          bigint NOT NULL CHECK (timeline OPERATOR(pg_catalog.>=) 1),
    claimed_at        timestamptz NOT NULL,
    reason            text NOT NULL,
    confirmed_start   timestamptz
);
COMMENT ON TABLE fencing.clock IS 'The epoch clock''s generation and the server that claimed it: timeline T issues terms from (generation + T - 1) * 2^40 + band_offset, 2^40 of them. One row per claim (moves, promotions, confirmations), the latest in force; inserted only by the extension.';
SELECT pg_catalog.pg_extension_config_dump('fencing.clock', '');
REVOKE ALL ON fencing.clock FROM PUBLIC;
GRANT SELECT ON fencing.clock TO pg_monitor;

CREATE FUNCTION fencing.clock_state(OUT state text, OUT timeline bigint, OUT generation bigint,
                                    OUT band_offset bigint,
                                    OUT term_floor bigint, OUT term_limit bigint,
                                    OUT system_identifier bigint,
                                    OUT claimed_system_identifier bigint,
                                    OUT claimed_timeline bigint,
                                    OUT claimed_at timestamptz, OUT reason text)
RETURNS record
AS 'MODULE_PATHNAME', 'fencing_clock_state'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.clock_state() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fencing.clock_state() TO pg_monitor;
COMMENT ON FUNCTION fencing.clock_state() IS
'The epoch clock as this server sees it, for superusers and pg_monitor. state: unclaimed (no term issued since 1.5), claimed (by this server on this timeline), new timeline (this server, promoted since), moves (claimed by another server, database or a higher timeline: the next term moves the generation), unconfirmed or awaits confirmation (the server started from a data directory not shut down cleanly, fencing.clock_unclean_start issue or confirm: fencing.confirm_clock()), awaits confirmation since a promotion (promoted since the server started, fencing.clock_promotion = confirm: fencing.confirm_clock()). generation, band_offset, term_floor, term_limit: the band the next term is issued in; claimed_*: who claimed the clock (fencing.clock).';

CREATE FUNCTION fencing.confirm_clock(lost_timelines integer DEFAULT 16)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_confirm_clock'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.confirm_clock(integer) FROM PUBLIC;
COMMENT ON FUNCTION fencing.confirm_clock(integer) IS
'For a superuser, once no other copy of this database issues terms: moves the clock''s generation above every band a copy of this data directory could have used (on this timeline and up to lost_timelines above it) and confirms the clock for this start of the server (fencing.clock_unclean_start). Returns the floor of the new band. Durable.';
