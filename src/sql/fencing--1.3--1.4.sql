-- fencing--1.3--1.4.sql: upgrade of the fencing extension from 1.3 to 1.4.
-- Each change says what it gives a 1.3 install; a fresh 1.4 install gets
-- the same objects from src/sql/concepts/ (test 65_upgrade_objects).

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.4'" to load this file. \quit
