-- 50_security.sql: who may do what to a scope.
-- Each scope has an owner (fencing.scopes.owner, 20_marks.sql) with every
-- privilege; owners grant lead, write and read (fencing.scope_grants).
-- Reading the extension's tables is limited by row security: rows of a
-- scope only for those who may read it.  Every decision is made in
-- src/security/scope_acl.c; see README "Security model".

-- Privileges granted on scopes; grantee 0 is PUBLIC.  The owner's are implicit.
CREATE TABLE fencing.scope_grants (
    scope      text COLLATE "C" NOT NULL,
    grantee    pg_catalog.regrole NOT NULL,
    privilege  text NOT NULL
               CHECK (privilege OPERATOR(pg_catalog.=) 'lead'
                      OR privilege OPERATOR(pg_catalog.=) 'write'
                      OR privilege OPERATOR(pg_catalog.=) 'read'),
    granted_by pg_catalog.regrole NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (scope, grantee, privilege)
);
COMMENT ON TABLE fencing.scope_grants IS 'Privileges on scopes (lead, write, read) granted by their owners; grantee 0 is PUBLIC.';
SELECT pg_catalog.pg_extension_config_dump('fencing.scope_grants', '');
REVOKE ALL ON fencing.scope_grants FROM PUBLIC;
GRANT SELECT ON fencing.scope_grants TO PUBLIC;
-- A grant or revoke changes which tables' scope columns may name the scope
-- (src/security/scope_acl.c): every backend forgets its answers for
-- that scope, whoever wrote the row (as for fencing.scopes, 20_marks.sql).
CREATE TRIGGER forget_cached_grants AFTER INSERT OR UPDATE OR DELETE
    ON fencing.scope_grants FOR EACH ROW EXECUTE FUNCTION fencing.forget_cached_marks();
CREATE TRIGGER forget_all_cached_grants AFTER TRUNCATE
    ON fencing.scope_grants FOR EACH STATEMENT EXECUTE FUNCTION fencing.forget_cached_marks();
ALTER TABLE fencing.scope_grants ENABLE ALWAYS TRIGGER forget_cached_grants;
ALTER TABLE fencing.scope_grants ENABLE ALWAYS TRIGGER forget_all_cached_grants;

CREATE FUNCTION fencing.create_scope(scope text, tokens text DEFAULT 'issued',
                                     owner regrole DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_create_scope'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
-- who may create scopes (also implicitly) is who may execute this
REVOKE ALL ON FUNCTION fencing.create_scope(text, text, regrole) FROM PUBLIC;
COMMENT ON FUNCTION fencing.create_scope(text, text, regrole) IS
'Creates a scope, owned by owner (default: the caller), whose tokens are issued (only terms of fence_next_epoch() and leases raise its mark) or external. Executing it is what allows a role to create scopes, also implicitly.';

CREATE FUNCTION fencing.grant_scope(scope text, privilege text, grantee text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_grant_scope'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.grant_scope(text, text, text) IS
'Grants lead, write or read on a scope to a role or to public; for the scope''s owner. Returns false if it was granted already.';

CREATE FUNCTION fencing.revoke_scope(scope text, privilege text, grantee text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_revoke_scope'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.revoke_scope(text, text, text) IS
'Revokes lead, write or read on a scope from a role or from public; for the scope''s owner. Returns false if there was no such grant.';

CREATE FUNCTION fencing.alter_scope_owner(scope text, owner regrole)
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_alter_scope_owner'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.alter_scope_owner(text, regrole) IS
'Hands a scope over to another role; for its owner, who must be a member of the new owner role (or a superuser).';

CREATE FUNCTION fencing.alter_scope_tokens(scope text, tokens text)
RETURNS void
AS 'MODULE_PATHNAME', 'fencing_alter_scope_tokens'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.alter_scope_tokens(text, text) IS
'Switches a scope between issued and external tokens; for its owner.';

CREATE FUNCTION fencing.may_read(scope text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fencing_may_read'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION fencing.may_read(text) IS
'Whether the current role may see a scope''s rows: superusers, pg_monitor and pg_read_all_stats, the owner, any grantee. The row-level security policy of the extension''s tables.';

-- Reading: rows of a scope only for those who may read it.  The extension's
-- C code and SECURITY DEFINER functions run as the tables' owner, which row
-- security does not restrict.  (fencing.leases gets the same policy in
-- 60_leases.sql.)
ALTER TABLE fencing.scopes ENABLE ROW LEVEL SECURITY;
ALTER TABLE fencing.terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE fencing.scope_grants ENABLE ROW LEVEL SECURITY;
CREATE POLICY may_read ON fencing.scopes FOR SELECT USING (fencing.may_read(scope));
CREATE POLICY may_read ON fencing.terms FOR SELECT USING (fencing.may_read(scope));
CREATE POLICY may_read ON fencing.scope_grants FOR SELECT USING (fencing.may_read(scope));
