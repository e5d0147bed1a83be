-- fencing--1.0.sql: the SQL API of the fencing extension (version 1.0).
-- Every name used below is schema-qualified; nothing depends on search_path.

\echo Use "CREATE EXTENSION fencing" to load this file. \quit

-- Install only into a schema "fencing" that nobody else controls.  The
-- control file names the schema; CREATE EXTENSION creates it, owned by the
-- installing superuser, or uses one that already exists, whoever made it.
-- A schema someone else prepared (a database owner can create one) would
-- let that role plant objects our callers resolve, or drop every fence.
DO $guard$
DECLARE
    nsp pg_catalog.oid;
    reason pg_catalog.text;
BEGIN
    SELECT n.oid INTO nsp FROM pg_catalog.pg_namespace n
     WHERE n.nspname OPERATOR(pg_catalog.=) 'fencing';
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_namespace n
                 JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
                WHERE n.oid OPERATOR(pg_catalog.=) nsp AND NOT r.rolsuper) THEN
        reason := 'It is owned by a role that is not a superuser.';
    ELSIF EXISTS (SELECT 1 FROM pg_catalog.pg_namespace n,
                         pg_catalog.aclexplode(n.nspacl) a
                   WHERE n.oid OPERATOR(pg_catalog.=) nsp
                     AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
                     AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner) THEN
        reason := 'A role other than its owner may create objects in it.';
    ELSIF EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                   WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                     AND d.refobjid OPERATOR(pg_catalog.=) nsp
                     -- the extension being created depends on its schema
                     AND d.classid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_extension'::pg_catalog.regclass)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.relnamespace OPERATOR(pg_catalog.=) nsp)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_proc p WHERE p.pronamespace OPERATOR(pg_catalog.=) nsp)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_type t WHERE t.typnamespace OPERATOR(pg_catalog.=) nsp)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_operator o WHERE o.oprnamespace OPERATOR(pg_catalog.=) nsp)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_default_acl da WHERE da.defaclnamespace OPERATOR(pg_catalog.=) nsp) THEN
        reason := 'It already holds objects, or default privileges.';
    END IF;
    IF reason IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'extension "fencing" will not install into the existing schema "fencing"',
            DETAIL = reason,
            HINT = 'Drop or rename schema "fencing" after checking what is in it; CREATE EXTENSION fencing then creates it for itself.';
    END IF;
END
$guard$;

-- The epoch clock: every term of every scope comes from here.
CREATE SEQUENCE fencing.epoch_seq AS bigint MINVALUE 1 NO CYCLE;

-- One row per scope: its high-water mark and its latest term.
CREATE TABLE fencing.scopes (
    scope           text COLLATE "C" PRIMARY KEY,
    mark            bigint NOT NULL CHECK (mark OPERATOR(pg_catalog.>=) 0),
    mark_raised_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    epoch           bigint,
    holder          text,
    epoch_issued_at timestamptz,
    terms_issued    bigint NOT NULL DEFAULT 0,
    CHECK (pg_catalog.octet_length(scope) OPERATOR(pg_catalog.<=) 200
           AND scope OPERATOR(pg_catalog.<>) '')
);

-- Every term ever issued, who took it and when. Never deleted.
CREATE TABLE fencing.terms (
    epoch     bigint PRIMARY KEY,
    scope     text COLLATE "C" NOT NULL,
    holder    text NOT NULL,
    issued_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    issued_by name NOT NULL
);
CREATE INDEX terms_scope_idx ON fencing.terms (scope, epoch);

COMMENT ON SEQUENCE fencing.epoch_seq IS 'The epoch clock: every term fence_next_epoch() issues comes from it.';
COMMENT ON TABLE fencing.scopes IS 'Per-scope high-water mark and latest term. Written only by the extension.';
COMMENT ON TABLE fencing.terms IS 'Every term issued, with its holder and time. Written only by the extension.';

-- Kept by pg_dump, so a dump/restore keeps marks, terms and the clock.
SELECT pg_catalog.pg_extension_config_dump('fencing.scopes', '');
SELECT pg_catalog.pg_extension_config_dump('fencing.terms', '');
SELECT pg_catalog.pg_extension_config_dump('fencing.epoch_seq', '');

-- Everyone may call the API; only the extension writes its state.
GRANT USAGE ON SCHEMA fencing TO PUBLIC;
REVOKE ALL ON fencing.epoch_seq, fencing.scopes, fencing.terms FROM PUBLIC;
GRANT SELECT ON fencing.scopes, fencing.terms TO PUBLIC;

CREATE FUNCTION fencing.fence_next_epoch(scope text, holder text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fence_next_epoch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.fence_next_epoch(text, text) IS
'Issues a new term for a scope on leader takeover: strictly greater than every term issued before, durable, and the scope''s new mark.';

CREATE FUNCTION fencing.use_token(scope text, token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'use_token'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.use_token(text, bigint) IS
'Declares the token this transaction writes with in a scope; it ends with the transaction.';

CREATE FUNCTION fencing.use_token(scope text, token text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'use_token_text'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.use_token(text, text) IS
'Declares a token given as text (decimal, or hexadecimal after 0x, as ZooKeeper prints a zxid) for a scope, for this transaction.';

CREATE FUNCTION fencing.use_token(token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'use_token_all_scopes'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.use_token(bigint) IS
'Declares the token this transaction writes with in every scope (and on tables fenced per row only).';

CREATE FUNCTION fencing.declared_token(scope text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'declared_token'
LANGUAGE C STABLE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.declared_token(text) IS
'The token this transaction declared for a scope (or for every scope), or NULL.';

CREATE FUNCTION fencing.reset_mark(scope text, mark bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'reset_mark'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION fencing.reset_mark(text, bigint) FROM PUBLIC;
COMMENT ON FUNCTION fencing.reset_mark(text, bigint) IS
'Sets a scope''s mark, lower if need be; the only way to lower one. Superuser only by default. Returns the previous mark.';

CREATE FUNCTION fencing.fence_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fence_trigger'
LANGUAGE C;
COMMENT ON FUNCTION fencing.fence_trigger() IS
'The fence: rejects writes whose token is below the row''s or the scope''s mark. Install it with fencing.protect().';

CREATE FUNCTION fencing.protect(relation regclass, token_column name,
                                scope text DEFAULT NULL, scope_column name DEFAULT NULL,
                                on_stale text DEFAULT 'error')
RETURNS void
AS 'MODULE_PATHNAME', 'protect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.protect(regclass, name, text, name, text) IS
'Protects a table: installs the fence triggers for a token column, a fixed scope or a scope column (or neither: per-row fencing only), and a policy, error or skip.';

CREATE FUNCTION fencing.unprotect(relation regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'unprotect'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.unprotect(regclass) IS
'Removes the fence triggers from a table.';

-- Which tables are protected, and how.
CREATE VIEW fencing.protected_tables AS
SELECT t.tgrelid::pg_catalog.regclass AS relation,
       a.args[1]::name AS token_column,
       CASE a.args[3] WHEN 'scope' THEN a.args[4] END AS scope,
       CASE a.args[3] WHEN 'column' THEN a.args[4]::name END AS scope_column,
       a.args[2] AS on_stale,
       t.tgenabled OPERATOR(pg_catalog.<>) 'D' AS enabled
FROM pg_catalog.pg_trigger t
CROSS JOIN LATERAL (
    -- tgargs holds NUL-terminated strings; split them, then undo the escaping
    SELECT pg_catalog.array_agg(pg_catalog.convert_from(pg_catalog.decode(e.arg, 'escape'),
                                                        pg_catalog.current_setting('server_encoding'))
                                ORDER BY e.n) AS args
      FROM pg_catalog.unnest(pg_catalog.string_to_array(pg_catalog.encode(t.tgargs, 'escape'), '\000'))
           WITH ORDINALITY AS e(arg, n)
     WHERE e.arg OPERATOR(pg_catalog.<>) ''
) a
WHERE t.tgfoid OPERATOR(pg_catalog.=) 'fencing.fence_trigger()'::pg_catalog.regprocedure
  AND t.tgname OPERATOR(pg_catalog.=) 'zz_fence_row'
  AND t.tgparentid OPERATOR(pg_catalog.=) 0;
COMMENT ON VIEW fencing.protected_tables IS 'Tables carrying the fence trigger, with their token column, scope and policy.';
GRANT SELECT ON fencing.protected_tables TO PUBLIC;
