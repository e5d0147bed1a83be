-- fencing--1.4--1.5.sql: upgrade of the fencing extension from 1.4 to 1.5.
-- Each change says what it gives a 1.4 install; a fresh 1.5 install gets
-- the same objects from src/sql/concepts/ (test 99_upgrade_objects).

\echo Use "ALTER EXTENSION fencing UPDATE TO '1.5'" to load this file. \quit
