-- 99_upgrade_objects: an install upgraded from every earlier version has
-- exactly the objects of a fresh install, object by object: members,
-- function definitions and their privileges and settings, views, table
-- columns (their order and comments too), constraints and indexes (by
-- name), policies, triggers, event triggers, sequences, comments, owners,
-- ACLs, the initial privileges pg_dump compares ACLs with (pg_init_privs),
-- persistence, and the tables pg_dump keeps.  A fresh install runs
-- fencing--1.5.sql, which make builds from src/sql/concepts/; an upgraded
-- one runs the scripts of src/sql/upgrade/: CREATE EXTENSION fencing VERSION
-- '1.2' runs fencing--1.0.sql, fencing--1.0--1.1.sql and fencing--1.1--1.2.sql
-- (of the older versions only 1.0 has an install script), and ALTER EXTENSION
-- fencing UPDATE every upgrade script after it: two separate sources of truth.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
CREATE DATABASE fencing_fresh;
CREATE DATABASE fencing_from_1_0;
CREATE DATABASE fencing_from_1_1;
CREATE DATABASE fencing_from_1_2;
CREATE DATABASE fencing_from_1_3;
CREATE DATABASE fencing_from_1_4;
RESET client_min_messages;

-- one line per property of every object of the extension
\set listing 'SELECT pg_catalog.string_agg(line, E''\n'' ORDER BY line COLLATE "C") AS listing FROM (SELECT ''member '' || pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) AS line FROM pg_catalog.pg_depend d WHERE d.refclassid = ''pg_extension''::regclass AND d.deptype = ''e'' AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = ''fencing'') UNION ALL SELECT ''function '' || p.oid::regprocedure || '' owner '' || p.proowner::regrole || '' def '' || pg_catalog.md5(pg_catalog.pg_get_functiondef(p.oid)) || '' acl '' || coalesce(p.proacl::text, ''-'') || '' secdef '' || p.prosecdef || '' leakproof '' || p.proleakproof || '' comment '' || coalesce(pg_catalog.md5(pg_catalog.obj_description(p.oid, ''pg_proc'')), ''-'') FROM pg_catalog.pg_proc p WHERE p.pronamespace = ''fencing''::regnamespace UNION ALL SELECT ''relation '' || c.oid::regclass || '' kind '' || c.relkind::text || '' owner '' || c.relowner::regrole || '' persistence '' || c.relpersistence::text || '' acl '' || coalesce(c.relacl::text, ''-'') || '' options '' || coalesce(c.reloptions::text, ''-'') || '' rls '' || c.relrowsecurity || c.relforcerowsecurity || '' comment '' || coalesce(pg_catalog.md5(pg_catalog.obj_description(c.oid, ''pg_class'')), ''-'') || '' view '' || CASE WHEN c.relkind = ''v'' THEN pg_catalog.md5(pg_catalog.pg_get_viewdef(c.oid)) ELSE ''-'' END FROM pg_catalog.pg_class c WHERE c.relnamespace = ''fencing''::regnamespace UNION ALL SELECT ''column '' || a.attrelid::regclass || ''.'' || a.attname || '' position '' || a.attnum || '' '' || pg_catalog.format_type(a.atttypid, a.atttypmod) || '' notnull '' || a.attnotnull || '' default '' || coalesce(pg_catalog.pg_get_expr(ad.adbin, ad.adrelid), ''-'') || '' collation '' || a.attcollation::regcollation || '' acl '' || coalesce(a.attacl::text, ''-'') || '' comment '' || coalesce(pg_catalog.md5(pg_catalog.col_description(a.attrelid, a.attnum)), ''-'') FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum WHERE c.relnamespace = ''fencing''::regnamespace AND a.attnum > 0 AND NOT a.attisdropped UNION ALL SELECT ''constraint '' || co.conrelid::regclass || '' '' || co.conname || '' '' || pg_catalog.pg_get_constraintdef(co.oid) FROM pg_catalog.pg_constraint co WHERE co.connamespace = ''fencing''::regnamespace UNION ALL SELECT ''index '' || pg_catalog.pg_get_indexdef(i.indexrelid) FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = ''fencing''::regnamespace UNION ALL SELECT ''policy '' || pol.tablename || '' '' || pol.policyname || '' '' || pol.permissive || '' '' || pol.cmd || '' '' || pol.roles::text || '' '' || coalesce(pol.qual, ''-'') || '' '' || coalesce(pol.with_check, ''-'') FROM pg_catalog.pg_policies pol WHERE pol.schemaname = ''fencing'' UNION ALL SELECT ''trigger '' || pg_catalog.pg_get_triggerdef(t.oid) || '' enabled '' || t.tgenabled::text FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = ''fencing''::regnamespace AND NOT t.tgisinternal UNION ALL SELECT ''event trigger '' || e.evtname || '' '' || e.evtevent || '' '' || coalesce(e.evttags::text, ''-'') || '' '' || e.evtfoid::regproc || '' '' || e.evtenabled::text FROM pg_catalog.pg_event_trigger e UNION ALL SELECT ''sequence '' || s.seqrelid::regclass || '' '' || s.seqtypid::regtype || '' '' || s.seqstart || '' '' || s.seqincrement || '' '' || s.seqmin || '' '' || s.seqmax || '' '' || s.seqcycle FROM pg_catalog.pg_sequence s JOIN pg_catalog.pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = ''fencing''::regnamespace UNION ALL SELECT ''schema acl '' || coalesce(n.nspacl::text, ''-'') || '' owner '' || n.nspowner::regrole FROM pg_catalog.pg_namespace n WHERE n.nspname = ''fencing'' UNION ALL SELECT ''initial privileges '' || pg_catalog.pg_describe_object(ip.classoid, ip.objoid, ip.objsubid) || '' '' || ip.privtype::text || '' '' || ip.initprivs::text FROM pg_catalog.pg_init_privs ip JOIN pg_catalog.pg_depend d ON d.classid = ip.classoid AND d.objid = ip.objoid AND d.objsubid = 0 WHERE d.refclassid = ''pg_extension''::regclass AND d.deptype = ''e'' AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = ''fencing'') UNION ALL SELECT ''dumped '' || cfg::regclass || '' where '' || coalesce(cond, ''-'') FROM pg_catalog.pg_extension x, unnest(x.extconfig, x.extcondition) AS u(cfg, cond) WHERE x.extname = ''fencing'') lines'

-- the lines in one listing and not the other: none is the expected output
\set compare 'SELECT ''only fresh'' COLLATE "C" AS side, l COLLATE "C" AS l FROM regexp_split_to_table(:''fresh_listing'', E''\\n'') l EXCEPT SELECT ''only fresh'', l FROM regexp_split_to_table(:''upgraded_listing'', E''\\n'') l UNION ALL (SELECT ''only upgraded'', l FROM regexp_split_to_table(:''upgraded_listing'', E''\\n'') l EXCEPT SELECT ''only upgraded'', l FROM regexp_split_to_table(:''fresh_listing'', E''\\n'') l) ORDER BY 1, 2;'

\c fencing_fresh
SET client_min_messages = warning;
CREATE EXTENSION fencing;
RESET client_min_messages;
:listing \gset fresh_
SELECT count(*) > 100 AS listing_is_thorough FROM regexp_split_to_table(:'fresh_listing', E'\n');
-- each kind of line is there: owners and initial privileges too
SELECT split_part(l, ' ', 1) COLLATE "C" AS kind, count(*) > 0 AS listed
  FROM regexp_split_to_table(:'fresh_listing', E'\n') l
 WHERE l ~ '^(function|relation|initial|policy|schema) .* owner |^initial privileges '
 GROUP BY 1 ORDER BY 1;

\c fencing_from_1_0
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.0';
ALTER EXTENSION fencing UPDATE;
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
:listing \gset upgraded_
:compare

\c fencing_from_1_1
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.1';
ALTER EXTENSION fencing UPDATE;
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
:listing \gset upgraded_
:compare

\c fencing_from_1_2
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.2';
ALTER EXTENSION fencing UPDATE;
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
:listing \gset upgraded_
:compare

\c fencing_from_1_3
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.3';
ALTER EXTENSION fencing UPDATE;
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
:listing \gset upgraded_
:compare

\c fencing_from_1_4
SET client_min_messages = warning;
CREATE EXTENSION fencing VERSION '1.4';
ALTER EXTENSION fencing UPDATE;
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
:listing \gset upgraded_
:compare

\c :regress_db
DROP DATABASE fencing_fresh;
DROP DATABASE fencing_from_1_0;
DROP DATABASE fencing_from_1_1;
DROP DATABASE fencing_from_1_2;
DROP DATABASE fencing_from_1_3;
DROP DATABASE fencing_from_1_4;
