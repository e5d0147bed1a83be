-- 60_upgrade: the upgrade path from 1.0 keeps marks and terms and adds leases.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE fencing_upgrade;
\c fencing_upgrade
CREATE EXTENSION fencing VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
SELECT fencing.fence_next_epoch('kept') AS before_upgrade \gset
SELECT to_regclass('fencing.leases') IS NULL AS no_leases_in_1_0;
ALTER EXTENSION fencing UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'fencing';
SELECT mark = :before_upgrade AS mark_kept FROM fencing.scopes WHERE scope = 'kept';
SELECT granted, term > :before_upgrade AS new_term FROM fencing.acquire_lease('kept', 'after-upgrade', '1 minute');
-- the objects of an upgraded install are those of a fresh one
SELECT pg_describe_object(classid, objid, objsubid) AS member
  FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fencing')
  ORDER BY 1;
SELECT unnest(extconfig)::regclass AS dumped FROM pg_extension WHERE extname = 'fencing' ORDER BY 1;
\c :regress_db
DROP DATABASE fencing_upgrade;
