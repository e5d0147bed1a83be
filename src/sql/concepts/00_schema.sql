-- 00_schema.sql: the schema "fencing", and who may look into it.
-- The extension installs only into a schema "fencing" that nobody else
-- controls (the guard below); everyone may use the schema, only the
-- extension writes its state.
-- Every name used in these files is schema-qualified; nothing depends on
-- search_path.

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

-- Everyone may call the API; only the extension writes its state.
GRANT USAGE ON SCHEMA fencing TO PUBLIC;
