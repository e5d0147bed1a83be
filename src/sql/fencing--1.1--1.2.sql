-- fencing--1.1--1.2.sql: no way around the fence, and scopes with owners.
-- Every name used below is schema-qualified; nothing depends on search_path.

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.2'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Part 1: the fence (issue 6): token sources, partitions, the inspection view
-- ---------------------------------------------------------------------------

-- ---------------------------------------------------------------------------
-- Part 2: scope security (issue 7): owners, privileges, per-scope clock
-- ---------------------------------------------------------------------------
