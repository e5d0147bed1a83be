-- 53_token_offerer: a raise is authorized for the role that offered the token
-- (the role that declared it with use_token(), or the current user writing
-- the token column) as well as for the current user.  A foreign key's
-- cascade runs as the referencing table's owner, a SECURITY DEFINER function
-- as its owner: neither lends its privileges to the token of another role.
-- And a view column's DEFAULT does not supply a token.
\set SHOW_CONTEXT never
CREATE ROLE regress_offerer_owner;
CREATE ROLE regress_offerer_mallory;
CREATE ROLE regress_offerer_writer;
CREATE ROLE regress_offerer_su SUPERUSER;
GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO regress_offerer_owner;
CREATE SCHEMA regress_offerer AUTHORIZATION regress_offerer_owner;
GRANT USAGE ON SCHEMA regress_offerer TO regress_offerer_mallory, regress_offerer_writer;
SET search_path = regress_offerer, public;

-- marks, read as a superuser
CREATE FUNCTION public.regress_offerer_mark(s text) RETURNS bigint
LANGUAGE sql AS $$ SELECT mark FROM fencing.scopes WHERE scope = s $$;

-- the owner: an external scope at mark 10, a parent and children that
-- follow it by ON DELETE CASCADE, ON DELETE SET NULL and ON UPDATE CASCADE
SET ROLE regress_offerer_owner;
SELECT fencing.create_scope('regress-offerer-e1', tokens => 'external');
SELECT fencing.takeover('regress-offerer-e1', 10);
CREATE TABLE parent (id int PRIMARY KEY);
CREATE TABLE child (id int PRIMARY KEY,
                    pid int REFERENCES parent ON DELETE CASCADE ON UPDATE CASCADE,
                    tok bigint);
CREATE TABLE child_null (id int PRIMARY KEY,
                         pid int REFERENCES parent ON DELETE SET NULL,
                         tok bigint);
CREATE TABLE child_column (id int PRIMARY KEY,
                           pid int REFERENCES parent ON DELETE CASCADE,
                           sc text, tok bigint);
SELECT fencing.protect('child', 'tok', scope => 'regress-offerer-e1');
SELECT fencing.protect('child_null', 'tok', scope => 'regress-offerer-e1');
SELECT fencing.protect('child_column', 'tok', scope_column => 'sc');
INSERT INTO parent SELECT generate_series(1, 20);
INSERT INTO child VALUES (1, 1, 10), (2, 2, 10), (3, 3, 10), (4, 4, 10), (5, 5, 10);
INSERT INTO child_null VALUES (6, 6, 10), (7, 7, 10);
INSERT INTO child_column VALUES (8, 8, 'regress-offerer-e1', 10), (9, 9, 'regress-offerer-e1', 10);
GRANT SELECT, DELETE, UPDATE ON parent TO regress_offerer_mallory, regress_offerer_writer;
SELECT fencing.grant_scope('regress-offerer-e1', 'write', 'regress_offerer_writer');
RESET ROLE;

-- mallory: no fencing rights, nothing on the children.  Directly: refused.
SET ROLE regress_offerer_mallory;
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 1000000);
DELETE FROM child WHERE id = 1;
ROLLBACK;
-- attack: ON DELETE CASCADE raises the fixed scope's mark
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 1000000);
DELETE FROM parent WHERE id = 1;
ROLLBACK;
-- the same with the token set as use_token() sends it to Citus's workers
-- (fencing.declared_tokens): offered by the role that set it
BEGIN;
SET LOCAL fencing.declared_tokens = '1000000';
DELETE FROM parent WHERE id = 1;
ROLLBACK;
-- ON DELETE SET NULL
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 1000000);
DELETE FROM parent WHERE id = 6;
ROLLBACK;
-- ON UPDATE CASCADE
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 1000000);
UPDATE parent SET id = 101 WHERE id = 2;
ROLLBACK;
-- a scope column
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 1000000);
DELETE FROM parent WHERE id = 8;
ROLLBACK;
-- a token declared for every scope
BEGIN;
SELECT fencing.use_token(9223372036854775807);
DELETE FROM parent WHERE id = 1;
ROLLBACK;
-- a stale token: rejected, and the DETAIL does not show mallory the mark it
-- may not read (fencing.committed_mark gives it NULL too)
SELECT fencing.committed_mark('regress-offerer-e1') AS mallory_reads;
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 5);
DELETE FROM parent WHERE id = 1;
ROLLBACK;
-- at the mark, nothing is raised: the cascade is the table owner's choice
-- and table privileges govern it, as for any write at the mark
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 10);
DELETE FROM parent WHERE id = 3;
COMMIT;
RESET ROLE;
SELECT public.regress_offerer_mark('regress-offerer-e1') AS e1_mark,
       (SELECT count(*) FROM regress_offerer.child WHERE id = 3) AS child_3_left,
       (SELECT count(*) FROM regress_offerer.child) AS children;

-- the writer holds write on the scope: its cascades raise, and it sees the mark
SET ROLE regress_offerer_writer;
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 5);
DELETE FROM parent WHERE id = 4;
ROLLBACK;
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 20);
DELETE FROM parent WHERE id = 4;
COMMIT;
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 30);
UPDATE parent SET id = 105 WHERE id = 5;
COMMIT;
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 40);
DELETE FROM parent WHERE id = 7;
COMMIT;
RESET ROLE;
SELECT public.regress_offerer_mark('regress-offerer-e1') AS e1_mark,
       (SELECT tok FROM regress_offerer.child WHERE id = 5) AS child_5_tok,
       (SELECT pid IS NULL AND tok = 40 FROM regress_offerer.child_null WHERE id = 7) AS child_7_set_null;

-- a cascade that moves rows to another scope (the scope column follows the
-- parent's key): each scope's token is judged for the role that offered it
SET ROLE regress_offerer_owner;
SELECT fencing.create_scope('regress-offerer-m1', tokens => 'external');
SELECT fencing.create_scope('regress-offerer-m2', tokens => 'external');
SELECT fencing.takeover('regress-offerer-m1', 10), fencing.takeover('regress-offerer-m2', 10);
CREATE TABLE scope_names (name text PRIMARY KEY);
CREATE TABLE moving (id int PRIMARY KEY,
                     sc text REFERENCES scope_names ON UPDATE CASCADE,
                     tok bigint);
SELECT fencing.protect('moving', 'tok', scope_column => 'sc');
INSERT INTO scope_names VALUES ('regress-offerer-m1');
INSERT INTO moving VALUES (1, 'regress-offerer-m1', 10);
GRANT SELECT, UPDATE ON scope_names TO regress_offerer_mallory;
RESET ROLE;
SET ROLE regress_offerer_mallory;
-- raising the scope the rows move to
BEGIN;
SELECT fencing.use_token('regress-offerer-m1', 10), fencing.use_token('regress-offerer-m2', 1000);
UPDATE scope_names SET name = 'regress-offerer-m2';
ROLLBACK;
-- raising the scope the rows leave
BEGIN;
SELECT fencing.use_token('regress-offerer-m1', 1000), fencing.use_token('regress-offerer-m2', 10);
UPDATE scope_names SET name = 'regress-offerer-m2';
ROLLBACK;
RESET ROLE;
-- two declarers: the owner's token for one scope does not carry mallory's
-- for the other
BEGIN;
SET LOCAL ROLE regress_offerer_owner;
SELECT fencing.use_token('regress-offerer-m2', 1000);
SET LOCAL ROLE regress_offerer_mallory;
SELECT fencing.use_token('regress-offerer-m1', 1000);
UPDATE scope_names SET name = 'regress-offerer-m2';
ROLLBACK;
BEGIN;
SET LOCAL ROLE regress_offerer_owner;
SELECT fencing.use_token('regress-offerer-m1', 1000);
SET LOCAL ROLE regress_offerer_mallory;
SELECT fencing.use_token('regress-offerer-m2', 1000);
UPDATE scope_names SET name = 'regress-offerer-m2';
ROLLBACK;
SET ROLE regress_offerer_mallory;
-- at both marks: the rows move
BEGIN;
SELECT fencing.use_token('regress-offerer-m1', 10), fencing.use_token('regress-offerer-m2', 10);
UPDATE scope_names SET name = 'regress-offerer-m2';
COMMIT;
RESET ROLE;
SELECT public.regress_offerer_mark('regress-offerer-m1') AS m1_mark,
       public.regress_offerer_mark('regress-offerer-m2') AS m2_mark,
       (SELECT sc FROM regress_offerer.moving WHERE id = 1) AS moved_to;

-- the declaration keeps the role that made it through savepoints: mallory
-- declares, the owner's declaration in a savepoint is rolled back, and the
-- owner's own write then carries mallory's token
BEGIN;
SET LOCAL ROLE regress_offerer_mallory;
SELECT fencing.use_token('regress-offerer-e1', 50);
SAVEPOINT s;
SET LOCAL ROLE regress_offerer_owner;
SELECT fencing.use_token('regress-offerer-e1', 60);
ROLLBACK TO SAVEPOINT s;
SET LOCAL ROLE regress_offerer_owner;
SELECT fencing.declared_token('regress-offerer-e1') AS declared;
UPDATE child SET pid = pid WHERE id = 2;
ROLLBACK;
-- and the other way round: the owner's declaration made in a savepoint that
-- is kept, replacing mallory's in the same (sub)transaction, is the owner's
BEGIN;
SET LOCAL ROLE regress_offerer_mallory;
SELECT fencing.use_token('regress-offerer-e1', 50);
SET LOCAL ROLE regress_offerer_owner;
SELECT fencing.use_token('regress-offerer-e1', 60);
UPDATE child SET pid = pid WHERE id = 2;
COMMIT;
SELECT public.regress_offerer_mark('regress-offerer-e1') AS e1_mark;

-- SECURITY DEFINER: a function that declares its own token writes with its
-- owner's rights (documented); one that writes with the caller's declared
-- token needs the caller's write privilege as well
SET ROLE regress_offerer_owner;
CREATE FUNCTION promote(t bigint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = regress_offerer, pg_catalog AS $$
BEGIN
  PERFORM fencing.use_token('regress-offerer-e1', t);
  UPDATE child SET pid = pid WHERE id = 1;
END $$;
CREATE FUNCTION touch() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = regress_offerer, pg_catalog AS $$
BEGIN
  UPDATE child SET pid = pid WHERE id = 1;
END $$;
CREATE FUNCTION add_row() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = regress_offerer, pg_catalog AS $$
BEGIN
  INSERT INTO child (id, pid) VALUES (50, 10) ON CONFLICT DO NOTHING;
END $$;
GRANT EXECUTE ON FUNCTION promote(bigint), touch(), add_row() TO regress_offerer_mallory;
RESET ROLE;
SET ROLE regress_offerer_mallory;
SELECT regress_offerer.promote(70);
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 80);
SELECT regress_offerer.touch();
ROLLBACK;
BEGIN;
SELECT fencing.use_token('regress-offerer-e1', 70);
SELECT regress_offerer.touch();
COMMIT;
-- the transaction already holds the scope exclusively (promote raised it):
-- the raise itself checks the offerer, also when an INSERT ... ON CONFLICT
-- deferred it to the row written
BEGIN;
SELECT regress_offerer.promote(90);
SELECT fencing.use_token('regress-offerer-e1', 100);
SELECT regress_offerer.touch();
ROLLBACK;
BEGIN;
SELECT regress_offerer.promote(90);
SELECT fencing.use_token('regress-offerer-e1', 100);
SELECT regress_offerer.add_row();
ROLLBACK;
RESET ROLE;
SELECT public.regress_offerer_mark('regress-offerer-e1') AS e1_mark,
       (SELECT tok FROM regress_offerer.child WHERE id = 1) AS child_1_tok,
       (SELECT count(*) FROM regress_offerer.child WHERE id = 50) AS child_50;

-- a table fenced per row (no scope): its marks are its rows' tokens, and
-- raising one through a cascade needs the offerer's UPDATE on the token column
SET ROLE regress_offerer_owner;
CREATE TABLE row_child (id int PRIMARY KEY,
                        pid int REFERENCES parent ON UPDATE CASCADE,
                        tok bigint);
SELECT fencing.protect('row_child', 'tok');
INSERT INTO row_child VALUES (1, 11, 10), (2, 12, 10);
GRANT SELECT (id, pid) ON row_child TO regress_offerer_writer;
GRANT UPDATE (tok) ON row_child TO regress_offerer_writer;
RESET ROLE;
SET ROLE regress_offerer_mallory;
BEGIN;
SELECT fencing.use_token(1000000);
UPDATE parent SET id = 111 WHERE id = 11;
ROLLBACK;
-- stale: the row's token is not shown to a role that may not select it
BEGIN;
SELECT fencing.use_token(5);
UPDATE parent SET id = 111 WHERE id = 11;
ROLLBACK;
-- at the row's token: nothing raised, the cascade goes through
BEGIN;
SELECT fencing.use_token(10);
UPDATE parent SET id = 111 WHERE id = 11;
COMMIT;
RESET ROLE;
-- the writer may update the token column (not select it): it raises
SET ROLE regress_offerer_writer;
BEGIN;
SELECT fencing.use_token(5);
UPDATE parent SET id = 112 WHERE id = 12;
ROLLBACK;
BEGIN;
SELECT fencing.use_token(20);
UPDATE parent SET id = 112 WHERE id = 12;
COMMIT;
RESET ROLE;
SELECT id, pid, tok FROM regress_offerer.row_child ORDER BY id;

-- a child owned by a superuser: every scope check of the current user
-- passes, the offerer's does not
CREATE TABLE regress_offerer.su_parent (id int PRIMARY KEY);
CREATE TABLE regress_offerer.su_child (id int PRIMARY KEY,
                                       pid int REFERENCES regress_offerer.su_parent ON DELETE CASCADE,
                                       tok bigint);
SELECT fencing.create_scope('regress-offerer-su', tokens => 'external');
SELECT fencing.takeover('regress-offerer-su', 11);
SELECT fencing.protect('regress_offerer.su_child', 'tok', scope => 'regress-offerer-su');
ALTER TABLE regress_offerer.su_child OWNER TO regress_offerer_su;
INSERT INTO regress_offerer.su_parent VALUES (1), (2);
INSERT INTO regress_offerer.su_child VALUES (1, 1, 11), (2, 2, 11);
GRANT SELECT, DELETE ON regress_offerer.su_parent TO regress_offerer_mallory;
SET ROLE regress_offerer_mallory;
BEGIN;
SELECT fencing.use_token(9223372036854775807);
DELETE FROM su_parent WHERE id = 1;
ROLLBACK;
-- a scope that does not exist yet: the superuser would create it, mallory
-- may not offer a token for it
RESET ROLE;
CREATE TABLE regress_offerer.su_parent2 (id int PRIMARY KEY);
CREATE TABLE regress_offerer.su_child2 (id int PRIMARY KEY,
                                        pid int REFERENCES regress_offerer.su_parent2 ON DELETE CASCADE,
                                        tok bigint);
INSERT INTO regress_offerer.su_parent2 VALUES (1);
INSERT INTO regress_offerer.su_child2 VALUES (1, 1, 0);
SELECT fencing.protect('regress_offerer.su_child2', 'tok', scope => 'regress-offerer-new');
ALTER TABLE regress_offerer.su_child2 OWNER TO regress_offerer_su;
GRANT SELECT, DELETE ON regress_offerer.su_parent2 TO regress_offerer_mallory;
SET ROLE regress_offerer_mallory;
BEGIN;
SELECT fencing.use_token('regress-offerer-new', 5);
DELETE FROM su_parent2 WHERE id = 1;
ROLLBACK;
RESET ROLE;
SELECT public.regress_offerer_mark('regress-offerer-su') AS su_mark,
       (SELECT count(*) FROM fencing.scopes WHERE scope = 'regress-offerer-new') AS new_scopes,
       (SELECT count(*) FROM regress_offerer.su_child) AS su_children,
       (SELECT count(*) FROM regress_offerer.su_child2) AS su_children2;

-- a view column DEFAULT does not supply the token (protect() refuses one on
-- the table; the rewriter fills a view's in before the trigger runs)
SET ROLE regress_offerer_owner;
SELECT fencing.create_scope('regress-offerer-v', tokens => 'external');
SELECT fencing.takeover('regress-offerer-v', 5);
CREATE TABLE vt (id int PRIMARY KEY, v text, tok bigint);
SELECT fencing.protect('vt', 'tok', scope => 'regress-offerer-v');
CREATE VIEW vt_plain AS SELECT id, v, tok FROM vt;
CREATE VIEW vt_default AS SELECT id, tok AS token, v FROM vt;
ALTER VIEW vt_default ALTER COLUMN token SET DEFAULT fencing.committed_mark('regress-offerer-v');
CREATE VIEW vt_outer AS SELECT * FROM vt_default WHERE id > 0;
CREATE VIEW vt_other_default AS SELECT id, v, tok FROM vt;
ALTER VIEW vt_other_default ALTER COLUMN v SET DEFAULT 'from the view';
INSERT INTO vt_plain VALUES (1, 'plain', 5);
INSERT INTO vt_other_default (id, tok) VALUES (2, 5);
INSERT INTO vt_default (id, v) VALUES (70, 'tokenless');
INSERT INTO vt_default (id, token, v) VALUES (71, DEFAULT, 'explicit default');
INSERT INTO vt_default (id, token, v) VALUES (72, 5, 'token given, default there');
INSERT INTO vt_outer (id, v) VALUES (73, 'through a view over the view');
UPDATE vt_default SET token = DEFAULT WHERE id = 1;
UPDATE vt_default SET v = 'no token assigned' WHERE id = 1;
-- a view whose rule writes the table: its default is caught as well
CREATE VIEW vt_rule AS SELECT id, v, tok FROM vt;
ALTER VIEW vt_rule ALTER COLUMN tok SET DEFAULT 5;
CREATE RULE vt_rule_insert AS ON INSERT TO vt_rule
  DO INSTEAD INSERT INTO vt VALUES (NEW.id, NEW.v, NEW.tok);
INSERT INTO vt_rule (id, v) VALUES (75, 'through a rule');
-- a declared token is the write's token: the default is overwritten
BEGIN;
SELECT fencing.use_token('regress-offerer-v', 6);
INSERT INTO vt_default (id, v) VALUES (74, 'declared');
UPDATE vt_default SET token = DEFAULT, v = 'declared' WHERE id = 1;
COMMIT;
SELECT id, v, tok FROM vt ORDER BY id;
RESET ROLE;
-- a session's first statement, which loads the library in its middle, when
-- the trigger fires (no hook saw it start; the view's DEFAULT calls nothing
-- of the library): at top level it is known, and judged the same
SET ROLE regress_offerer_owner;
CREATE VIEW vt_const AS SELECT id, tok, v FROM vt;
ALTER VIEW vt_const ALTER COLUMN tok SET DEFAULT 6;
RESET ROLE;
SELECT current_database() AS regress_db \gset
\c :regress_db
SET search_path = regress_offerer, public;
SET ROLE regress_offerer_owner;
INSERT INTO vt_const (id, v) VALUES (76, 'first statement');
\c :regress_db
SET search_path = regress_offerer, public;
SET ROLE regress_offerer_owner;
UPDATE vt_const SET tok = DEFAULT, v = 'first statement' WHERE id = 1;
-- nested in the first statement (a DO block) it is not known: a view over
-- the column with a DEFAULT may be the one it writes through, and it is
-- refused (55000), a write to the table itself too; the retry is seen
\c :regress_db
SET search_path = regress_offerer, public;
SET ROLE regress_offerer_owner;
DO $$ BEGIN INSERT INTO regress_offerer.vt_const (id, v) VALUES (77, 'nested'); END $$;
DO $$ BEGIN INSERT INTO regress_offerer.vt_const (id, v) VALUES (77, 'nested, retried'); END $$;
\c :regress_db
SET search_path = regress_offerer, public;
SET ROLE regress_offerer_owner;
DO $$ BEGIN INSERT INTO regress_offerer.vt VALUES (78, 'nested, the table', 6); END $$;
DO $$ BEGIN INSERT INTO regress_offerer.vt VALUES (78, 'nested, the table, retried', 6); END $$;
SELECT id, v, tok FROM vt ORDER BY id;
RESET ROLE;

-- the token column is the foreign key: a cascade copies the parent's value
-- into it, written by the role that updated the parent (no declaration)
SET ROLE regress_offerer_owner;
CREATE TABLE ptok (tok bigint PRIMARY KEY);
CREATE TABLE ctok (id int PRIMARY KEY, v text,
                   tok bigint REFERENCES ptok ON UPDATE CASCADE);
CREATE TABLE ctok_row (id int PRIMARY KEY, v text,
                       tok bigint REFERENCES ptok ON UPDATE CASCADE);
SELECT fencing.protect('ctok', 'tok', scope => 'regress-offerer-e1');
SELECT fencing.protect('ctok_row', 'tok');
INSERT INTO ptok VALUES (70), (11);
INSERT INTO ctok VALUES (1, 'x', 70);
INSERT INTO ctok_row VALUES (1, 'x', 11);
GRANT SELECT, UPDATE ON ptok TO regress_offerer_mallory, regress_offerer_writer;
RESET ROLE;
SET ROLE regress_offerer_mallory;
-- no write on the scope: the cascade's raise is refused
UPDATE ptok SET tok = 9223372036854775000 WHERE tok = 70;
-- a per-row table: no UPDATE on the child's token column
UPDATE ptok SET tok = 9000000000000000000 WHERE tok = 11;
RESET ROLE;
SELECT public.regress_offerer_mark('regress-offerer-e1') AS e1_mark;
SELECT tok FROM ctok_row;
-- a role with write on the scope raises it through the cascade
SET ROLE regress_offerer_writer;
UPDATE ptok SET tok = 80 WHERE tok = 70;
RESET ROLE;
SELECT public.regress_offerer_mark('regress-offerer-e1') AS e1_mark;

-- a SECURITY DEFINER function that updates the referenced row: its owner
-- wrote the value the cascade copies, so its owner needs write on the
-- scope, not (only) the role that called the function
CREATE SCHEMA regress_offerer_m AUTHORIZATION regress_offerer_mallory;
SET ROLE regress_offerer_mallory;
CREATE TABLE regress_offerer_m.mparent (k bigint PRIMARY KEY);
INSERT INTO regress_offerer_m.mparent VALUES (5);
CREATE FUNCTION regress_offerer_m.bump(newk bigint) RETURNS void LANGUAGE sql SECURITY DEFINER
    AS 'UPDATE regress_offerer_m.mparent SET k = newk WHERE k = 5';
GRANT USAGE ON SCHEMA regress_offerer_m TO regress_offerer_owner;
GRANT REFERENCES, SELECT ON regress_offerer_m.mparent TO regress_offerer_owner;
GRANT EXECUTE ON FUNCTION regress_offerer_m.bump(bigint) TO regress_offerer_owner;
SET ROLE regress_offerer_owner;
SELECT fencing.create_scope('regress-offerer-sd', tokens => 'external');
SELECT fencing.takeover('regress-offerer-sd', 5);
CREATE TABLE regress_offerer.sd_child (id int PRIMARY KEY,
                                       tok bigint REFERENCES regress_offerer_m.mparent ON UPDATE CASCADE);
SELECT fencing.protect('regress_offerer.sd_child', 'tok', scope => 'regress-offerer-sd');
BEGIN;
SELECT fencing.use_token('regress-offerer-sd', 5);
INSERT INTO regress_offerer.sd_child VALUES (1, 5);
COMMIT;
-- the scope's owner calls it: refused, the function's owner may not raise
SELECT regress_offerer_m.bump(900000);
SELECT public.regress_offerer_mark('regress-offerer-sd') AS sd_mark,
       (SELECT tok FROM regress_offerer.sd_child) AS child_tok;
-- once the function's owner may write to the scope, the cascade raises it
SELECT fencing.grant_scope('regress-offerer-sd', 'write', 'regress_offerer_mallory');
SELECT regress_offerer_m.bump(6);
SELECT public.regress_offerer_mark('regress-offerer-sd') AS sd_mark,
       (SELECT tok FROM regress_offerer.sd_child) AS child_tok;
SELECT fencing.revoke_scope('regress-offerer-sd', 'write', 'regress_offerer_mallory');
RESET ROLE;

-- the first statement of a session that has not loaded the library: the
-- cascade's statement began unseen, so who wrote the value is not known,
-- and the write is refused (55000); the retry is seen, and judged
CREATE FUNCTION regress_offerer_m.move(oldk bigint, newk bigint) RETURNS void LANGUAGE sql SECURITY DEFINER
    AS 'UPDATE regress_offerer_m.mparent SET k = newk WHERE k = oldk';
ALTER FUNCTION regress_offerer_m.move(bigint, bigint) OWNER TO regress_offerer_mallory;
GRANT EXECUTE ON FUNCTION regress_offerer_m.move(bigint, bigint) TO regress_offerer_owner;
\c
SET ROLE regress_offerer_owner;
SELECT regress_offerer_m.move(6, 900001);
SELECT regress_offerer_m.move(6, 900001);
RESET ROLE;
SELECT public.regress_offerer_mark('regress-offerer-sd') AS sd_mark,
       (SELECT tok FROM regress_offerer.sd_child) AS child_tok;

-- scopes are locked by their owner only past 32 of the session role's own
-- (128 of another owner's): a cascade, which runs as the referencing
-- table's owner, locks that owner's scope alone
SELECT count(fencing.create_scope('regress-offerer-m' || lpad(g::text, 2, '0'), 'external', 'regress_offerer_mallory'))
  FROM generate_series(1, 33) g;
SELECT fencing.create_scope('regress-offerer-v1', 'external', 'regress_offerer_owner');
SET ROLE regress_offerer_mallory;
CREATE TABLE regress_offerer_m.m_rows (sc text NOT NULL, tok bigint);
SELECT fencing.protect('regress_offerer_m.m_rows', 'tok', scope_column => 'sc');
INSERT INTO regress_offerer_m.m_rows SELECT 'regress-offerer-m' || lpad(g::text, 2, '0'), 1 FROM generate_series(1, 33) g;
SET ROLE regress_offerer_owner;
CREATE TABLE regress_offerer.v_parent (id int PRIMARY KEY);
CREATE TABLE regress_offerer.v_child (id int REFERENCES regress_offerer.v_parent ON DELETE CASCADE, tok bigint);
SELECT fencing.protect('regress_offerer.v_child', 'tok', scope => 'regress-offerer-v1');
INSERT INTO regress_offerer.v_parent VALUES (1);
BEGIN;
SELECT fencing.use_token('regress-offerer-v1', 1);
INSERT INTO regress_offerer.v_child VALUES (1, 1);
COMMIT;
GRANT SELECT, DELETE ON regress_offerer.v_parent TO regress_offerer_mallory;
SET ROLE regress_offerer_mallory;
BEGIN;
INSERT INTO regress_offerer_m.m_rows SELECT 'regress-offerer-m' || lpad(g::text, 2, '0'), 1 FROM generate_series(1, 33) g;
SELECT fencing.use_token('regress-offerer-v1', 1);
DELETE FROM regress_offerer.v_parent WHERE id = 1;
SELECT r.rolname AS locked_by_owner, l.mode
  FROM pg_locks l JOIN pg_roles r ON r.oid = l.objid
 WHERE l.pid = pg_backend_pid() AND l.locktype = 'advisory' AND l.objsubid = -508
 ORDER BY 1, l.mode COLLATE "C";
COMMIT;
RESET ROLE;

-- clean up
DROP SCHEMA regress_offerer CASCADE;
DROP SCHEMA regress_offerer_m CASCADE;
DROP FUNCTION public.regress_offerer_mark(text);
SELECT fencing.revoke_scope('regress-offerer-e1', 'write', 'regress_offerer_writer');
SELECT fencing.alter_scope_owner(scope, current_user::regrole)
  FROM fencing.scopes WHERE scope LIKE 'regress-offerer-%' ORDER BY scope COLLATE "C";
REVOKE EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) FROM regress_offerer_owner;
-- protect() gave the owners of the tables it fenced EXECUTE on the fence
DROP OWNED BY regress_offerer_owner, regress_offerer_mallory;
DROP ROLE regress_offerer_owner;
DROP ROLE regress_offerer_mallory;
DROP ROLE regress_offerer_writer;
DROP ROLE regress_offerer_su;
