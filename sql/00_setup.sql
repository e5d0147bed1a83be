-- 00_setup: the extension installs, and owns nothing ordinary roles can write.
CREATE EXTENSION fencing;
SELECT extname, extversion, extnamespace::regnamespace FROM pg_extension WHERE extname = 'fencing';
SELECT c.relname, c.relkind FROM pg_class c
  WHERE c.relnamespace = 'fencing'::regnamespace ORDER BY 1;
