-- 40_trigger: the fence trigger on a table with one scope; every outcome and
-- every error a user can cause, from protect() to TRUNCATE.
\set SHOW_CONTEXT never

CREATE TABLE jobs (id int PRIMARY KEY, payload text, tok bigint);
SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
SELECT * FROM fencing.protected_tables;
SELECT tgname, tgtype FROM pg_trigger WHERE tgrelid = 'jobs'::regclass ORDER BY 1;

-- this scope also takes external tokens below (1.2: scopes are 'issued' by default)
SELECT fencing.create_scope('jobs', tokens => 'external');
SELECT fencing.fence_next_epoch('jobs', 'leader-a') AS a \gset

-- token from the row
INSERT INTO jobs VALUES (1, 'a1', :a);
-- token declared for the scope, stored in the row
BEGIN;
SELECT fencing.use_token('jobs', :a) = :a AS declared;
SELECT fencing.declared_token('jobs') = :a AS visible;
INSERT INTO jobs (id, payload) VALUES (2, 'a2');
UPDATE jobs SET payload = 'a1 updated' WHERE id = 1;
COMMIT;
SELECT id, payload, tok = :a AS tok_is_a FROM jobs ORDER BY id;
-- the declaration is gone with the transaction
SELECT fencing.declared_token('jobs') IS NULL AS gone;

-- no token at all (I4): an UPDATE that does not assign tok inherits nothing
UPDATE jobs SET payload = 'no token' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO jobs (id, payload) VALUES (3, 'no token');
\echo :LAST_ERROR_SQLSTATE
DELETE FROM jobs WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE

-- takeover by b: a is fenced at once, before b writes anything
SELECT fencing.fence_next_epoch('jobs', 'leader-b') AS b \gset
BEGIN;
SELECT fencing.use_token('jobs', :a);
UPDATE jobs SET payload = 'zombie' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
INSERT INTO jobs VALUES (4, 'zombie', :a);
\echo :LAST_ERROR_SQLSTATE
UPDATE jobs SET payload = 'zombie', tok = :a WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('jobs', :a);
DELETE FROM jobs WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- b writes; equal tokens are fine, many times in its term
UPDATE jobs SET payload = 'b', tok = :b WHERE id = 1;
UPDATE jobs SET payload = 'b again', tok = :b WHERE id = 1;
SELECT id, payload, tok = :b AS tok_is_b FROM jobs ORDER BY id;

-- a declared token wins: a column value that disagrees with it is rejected
BEGIN;
SELECT fencing.use_token('jobs', :a);
UPDATE jobs SET payload = 'b via column', tok = :b WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
UPDATE jobs SET payload = 'b via column', tok = :b WHERE id = 2;
COMMIT;
SELECT payload, tok = :b AS tok_is_b FROM jobs WHERE id = 2;

-- an external token above the mark raises it (lock service revisions)
UPDATE jobs SET payload = 'external', tok = :b + 1000 WHERE id = 1;
SELECT mark - :b AS mark_above_b FROM fencing.scopes WHERE scope = 'jobs';
UPDATE jobs SET payload = 'b is stale now', tok = :b WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
SELECT id, payload, tok - :b AS tok_above_b FROM jobs ORDER BY id;

-- bad tokens
UPDATE jobs SET tok = -1 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.use_token('jobs', -5);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.use_token('jobs', NULL::bigint);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.use_token(NULL, 5::bigint);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.use_token('', 5::bigint);
\echo :LAST_ERROR_SQLSTATE
-- tokens given as text are parsed strictly
SELECT fencing.use_token('jobs', '5000');
SELECT fencing.use_token('jobs', '0x1388');
SELECT fencing.use_token('jobs', ' 5');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.use_token('jobs', '5x');
SELECT fencing.use_token('jobs', '-5');
SELECT fencing.use_token('jobs', '+5');
SELECT fencing.use_token('jobs', '');
SELECT fencing.use_token('jobs', '0x');
SELECT fencing.use_token('jobs', '9223372036854775807');
SELECT fencing.use_token('jobs', '9223372036854775808');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.use_token('jobs', '0x8000000000000000');
UPDATE jobs SET tok = 99999999999999999999 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE

-- a smallint/integer token column cannot hold every token
CREATE TABLE small_tok (id int PRIMARY KEY, tok int);
SELECT fencing.protect('small_tok', 'tok', scope => 'small');
BEGIN;
SELECT fencing.use_token('small', 3000000000);
INSERT INTO small_tok (id) VALUES (1);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
INSERT INTO small_tok VALUES (1, 7);
SELECT * FROM small_tok;

-- policy "skip": stale rows are left out, the statement goes on
CREATE TABLE skip_jobs (id int PRIMARY KEY, payload text, tok bigint);
SELECT fencing.protect('skip_jobs', 'tok', scope => 'skip', on_stale => 'skip');
INSERT INTO skip_jobs VALUES (1, 'new', 10), (2, 'new', 10);
INSERT INTO skip_jobs VALUES (3, 'stale', 9);
UPDATE skip_jobs SET payload = 'stale', tok = 9;
BEGIN;
SELECT fencing.use_token('skip', 9);
DELETE FROM skip_jobs;
COMMIT;
UPDATE skip_jobs SET payload = 'fresh', tok = 10 WHERE id = 1;
SELECT * FROM skip_jobs ORDER BY id;
-- a missing token is an error even with "skip"
UPDATE skip_jobs SET payload = 'no token';
\echo :LAST_ERROR_SQLSTATE

-- TRUNCATE throws every row away: it needs a token the scope admits
TRUNCATE jobs;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fencing.use_token('jobs', :b);
TRUNCATE jobs;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT fencing.use_token('jobs', :b + 1000) > 0 AS declared;
TRUNCATE jobs;
COMMIT;
SELECT count(*) FROM jobs;
-- TRUNCATE with "skip" still fails rather than being skipped
BEGIN;
SELECT fencing.use_token('skip', 1);
TRUNCATE skip_jobs;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- per-row fencing only (no scope): tokens compared with the row's own
CREATE TABLE accounts (id int PRIMARY KEY, balance int, tok bigint);
SELECT fencing.protect('accounts', 'tok');
INSERT INTO accounts VALUES (1, 100, 7), (2, 100, 3);
UPDATE accounts SET balance = 0, tok = 5 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE accounts SET balance = 50, tok = 5 WHERE id = 2;
BEGIN;
SELECT fencing.use_token(6);
UPDATE accounts SET balance = balance + 1;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT fencing.use_token(8);
UPDATE accounts SET balance = balance + 1;
COMMIT;
SELECT * FROM accounts ORDER BY id;
BEGIN;
SELECT fencing.use_token(7);
TRUNCATE accounts;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- protect() checks the table up front
SELECT fencing.protect('jobs', 'nope', scope => 'jobs');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.protect('jobs', 'payload', scope => 'jobs');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.protect('jobs', 'tok', scope => 'jobs', scope_column => 'payload');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.protect('jobs', 'tok', scope_column => 'nope');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.protect('jobs', 'tok', scope_column => 'tok');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.protect('jobs', 'tok', scope => '');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.protect('jobs', 'tok', scope => 'jobs', on_stale => 'ignore');
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.protect(NULL, 'tok');
\echo :LAST_ERROR_SQLSTATE
CREATE VIEW jobs_view AS SELECT * FROM jobs;
SELECT fencing.protect('jobs_view', 'tok', scope => 'jobs');
-- nor the extension's own tables (its functions write them, with no token)
SELECT fencing.protect('fencing.scopes', 'mark');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE gen_tok (id int, tok bigint GENERATED ALWAYS AS (id * 2) STORED);
SELECT fencing.protect('gen_tok', 'tok', scope => 'gen');
\echo :LAST_ERROR_SQLSTATE
-- scope names are any text; the view shows them as given
CREATE TABLE odd_names (id int, "token col" bigint);
SELECT fencing.protect('odd_names', 'token col', scope => 'ordre/été ''quoted'' \back');
SELECT relation, token_column, scope FROM fencing.protected_tables WHERE relation = 'odd_names'::regclass;
INSERT INTO odd_names VALUES (1, 3);
SELECT scope, mark FROM fencing.scopes WHERE scope LIKE 'ordre%';
DROP TABLE odd_names;
-- protecting again replaces the triggers (idempotent)
SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'jobs'::regclass;

-- the trigger attached by hand, wrongly
CREATE TABLE by_hand (id int, tok bigint, payload text);
CREATE TRIGGER after_row AFTER INSERT ON by_hand
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'scope', 'h');
INSERT INTO by_hand VALUES (1, 1);
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER after_row ON by_hand;
CREATE TRIGGER per_statement BEFORE INSERT ON by_hand
  FOR EACH STATEMENT EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'scope', 'h');
INSERT INTO by_hand VALUES (1, 1);
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER per_statement ON by_hand;
CREATE TRIGGER no_args BEFORE INSERT ON by_hand
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger();
INSERT INTO by_hand VALUES (1, 1);
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER no_args ON by_hand;
CREATE TRIGGER bad_kind BEFORE INSERT ON by_hand
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'galaxy', 'h');
INSERT INTO by_hand VALUES (1, 1);
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER bad_kind ON by_hand;
CREATE TRIGGER text_token BEFORE INSERT ON by_hand
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('payload', 'error', 'row');
INSERT INTO by_hand VALUES (1, 1);
\echo :LAST_ERROR_SQLSTATE
DROP TRIGGER text_token ON by_hand;
SELECT fencing.fence_trigger();
\echo :LAST_ERROR_SQLSTATE
-- a column renamed under the trigger is caught on the next write
CREATE TRIGGER by_hand_ok BEFORE INSERT ON by_hand
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'row');
INSERT INTO by_hand VALUES (1, 1);
ALTER TABLE by_hand RENAME COLUMN tok TO token;
INSERT INTO by_hand VALUES (2, 2);
\echo :LAST_ERROR_SQLSTATE

-- protect() gives the row trigger its arguments packed in one, a text
-- array literal (each argument of each trigger is copied at every
-- statement); names with quotes, commas, braces, backslashes and spaces
-- come back whole, and the view shows the arguments it holds
CREATE TABLE "odd, ""names""" ("tok {x}" bigint, "sc\ope" text NOT NULL, v int);
SELECT fencing.protect('"odd, ""names"""', 'tok {x}', scope_column => 'sc\ope', on_stale => 'skip');
SELECT pg_get_triggerdef(oid) FROM pg_trigger
 WHERE tgrelid = '"odd, ""names"""'::regclass AND tgname = 'zz_fence_row';
SELECT token_column, scope, scope_column, on_stale, tokens, enabled FROM fencing.protected_tables
 WHERE relation = '"odd, ""names"""'::regclass;
SELECT mark AS odd FROM fencing.scopes WHERE scope = 'jobs' \gset
INSERT INTO "odd, ""names""" VALUES (:odd, 'jobs', 1);
INSERT INTO "odd, ""names""" VALUES (:odd - 1, 'jobs', 2);
SELECT "tok {x}" = :odd AS at_mark, v FROM "odd, ""names""";
SELECT fencing.protect('"odd, ""names"""', 'tok {x}', scope => 'NULL');
SELECT pg_get_triggerdef(oid) FROM pg_trigger
 WHERE tgrelid = '"odd, ""names"""'::regclass AND tgname = 'zz_fence_row';
SELECT token_column, scope, scope_column, on_stale FROM fencing.protected_tables
 WHERE relation = '"odd, ""names"""'::regclass;
SELECT fencing.protect('"odd, ""names"""', 'tok {x}', scope => ' a, {b} "c" \d ');
SELECT token_column, '<' || scope || '>' AS scope, scope_column, on_stale FROM fencing.protected_tables
 WHERE relation = '"odd, ""names"""'::regclass;
DROP TABLE "odd, ""names""";
-- a packed argument written by hand (white space around an element is not
-- part of it); one that is not a list of 3 to 5 elements is refused
DROP TRIGGER by_hand_ok ON by_hand;
CREATE TRIGGER packed_by_hand BEFORE INSERT ON by_hand
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{ token , error,row }');
INSERT INTO by_hand VALUES (3, 3);
SELECT fencing.trigger_arguments(tgargs) FROM pg_trigger WHERE tgname = 'packed_by_hand';
DROP TRIGGER packed_by_hand ON by_hand;
CREATE TRIGGER packed_badly BEFORE INSERT ON by_hand
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{token,error,row');
INSERT INTO by_hand VALUES (4, 4);
\echo :LAST_ERROR_SQLSTATE
SELECT fencing.trigger_arguments(tgargs) FROM pg_trigger WHERE tgname = 'packed_badly';
DROP TRIGGER packed_badly ON by_hand;
DO $$
DECLARE
    arg text;
    detail text;
BEGIN
    FOREACH arg IN ARRAY ARRAY['{token,null,row}', '{token,"",row}', '{token,error}', 'token']
    LOOP
        EXECUTE format('CREATE TRIGGER packed_other BEFORE INSERT ON by_hand '
                       'FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger(%L)', arg);
        BEGIN
            INSERT INTO by_hand VALUES (4, 4);
            RAISE NOTICE '%: written', arg;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
            RAISE NOTICE '%: % (%) %', arg, SQLERRM, SQLSTATE, detail;
        END;
        DROP TRIGGER packed_other ON by_hand;
    END LOOP;
END
$$;

-- protected_tables reads the token source where the trigger does (after
-- the fixed arguments): a scope, or a token column, named tokens=declared
-- does not make the fence take declared tokens only, nor the view say so
CREATE TABLE named_like_source (id int PRIMARY KEY, tok bigint, "tokens=declared" bigint);
SELECT fencing.protect('named_like_source', 'tok', scope => 'tokens=declared');
SELECT scope, tokens FROM fencing.protected_tables WHERE relation = 'named_like_source'::regclass;
SELECT fencing.protect('named_like_source', 'tokens=declared');
SELECT token_column, tokens FROM fencing.protected_tables WHERE relation = 'named_like_source'::regclass;
SELECT fencing.protect('named_like_source', 'tokens=declared', tokens => 'declared');
SELECT token_column, tokens FROM fencing.protected_tables WHERE relation = 'named_like_source'::regclass;
DROP TABLE named_like_source;
-- a zz_fence_row that does not judge every write before it is made (AFTER,
-- some events only, UPDATE OF some columns) shows a configuration the fence
-- does not enforce: a problem, whatever the other fence triggers judge
CREATE TABLE odd_fence (id int PRIMARY KEY, tok bigint, v text);
CREATE TRIGGER zz_fence_truncate BEFORE TRUNCATE ON odd_fence
  EXECUTE FUNCTION fencing.fence_trigger();
CREATE TRIGGER aa_fence BEFORE INSERT OR UPDATE OR DELETE ON odd_fence
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,row}');
CREATE TRIGGER zz_fence_row AFTER INSERT ON odd_fence
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,scope,jobs}');
ALTER TABLE odd_fence ENABLE ALWAYS TRIGGER zz_fence_row, ENABLE ALWAYS TRIGGER zz_fence_truncate;
SELECT scope, enabled, problem FROM fencing.protected_tables WHERE relation = 'odd_fence'::regclass;
DROP TRIGGER zz_fence_row ON odd_fence;
CREATE TRIGGER zz_fence_row BEFORE INSERT OR DELETE ON odd_fence
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,row}');
ALTER TABLE odd_fence ENABLE ALWAYS TRIGGER zz_fence_row;
SELECT enabled, problem FROM fencing.protected_tables WHERE relation = 'odd_fence'::regclass;
DROP TRIGGER zz_fence_row ON odd_fence;
CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE OF id OR DELETE ON odd_fence
  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('{tok,error,row}');
ALTER TABLE odd_fence ENABLE ALWAYS TRIGGER zz_fence_row;
SELECT enabled, problem FROM fencing.protected_tables WHERE relation = 'odd_fence'::regclass;
SELECT "check", object FROM fencing.health WHERE object = 'odd_fence';
SELECT fencing.protect('odd_fence', 'tok');
SELECT enabled, problem FROM fencing.protected_tables WHERE relation = 'odd_fence'::regclass;
DROP TABLE odd_fence;

-- unprotect removes the fence
SELECT fencing.unprotect('small_tok');
INSERT INTO small_tok (id) VALUES (2);
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'small_tok'::regclass;
