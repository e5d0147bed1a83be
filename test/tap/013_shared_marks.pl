# 013_shared_marks.pl: the marks kept in shared memory (fencing.shared_marks,
# fencing preloaded) are used by backends that did not read them, and never
# serve a mark that is no longer the scope's.
#
# Proves that
#   - a backend that never wrote a scope uses the mark another backend read
#     (fencing.shared_marks_info().hits grows; nothing is read twice);
#   - after a takeover commits, a backend that never wrote the scope refuses
#     the old token (the shared entry was forgotten);
#   - a direct UPDATE of fencing.scopes by a superuser (no scope lock) is
#     seen by a new backend;
#   - with far more scopes than entries, every write is still judged by its
#     own scope's mark;
#   - scopes are per database: the same scope name in two databases has two
#     marks, and a registry dropped and created again does not inherit the
#     marks of the old one;
#   - a writer at a mark kept there holds no scope lock (it registers in
#     shared memory), and a takeover waits for it all the same (a wait on
#     its virtual transaction id, which pg_blocking_pids() reports); a
#     writer that prepares its transaction holds the scope lock instead,
#     and a takeover waits for the prepared transaction (a bulk writer's
#     by the owner's lock after 32 scope locks of its own role's scopes,
#     not another owner's scope it wrote); a writer whose backend was
#     terminated holds nothing;
#   - without room (fencing.shared_marks = 0) the function says capacity 0.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('shared_marks', "shared_preload_libraries = 'fencing'",
	'fencing.shared_marks = 64', 'fencing.log_rejections = off',
	'max_prepared_transactions = 2');

sub q1 { my ($db, $sql) = @_; return $node->safe_psql($db, $sql); }

# one new session; returns its errors
sub write_err
{
	my ($db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql, on_error_stop => 0);
	return $err;
}

sub hits { return q1('postgres', 'SELECT hits FROM fencing.shared_marks_info()'); }

for my $db ('postgres', 'other')
{
	if ($db eq 'other')
	{
		q1('postgres', "CREATE DATABASE other");
		q1($db, "CREATE EXTENSION fencing");
	}
	q1($db, q{
		CREATE TABLE jobs (id int PRIMARY KEY, shard int NOT NULL, tok bigint, v text);
		SELECT fencing.protect('jobs', 'tok', scope_column => 'shard');
	});
}
q1('postgres', q{INSERT INTO jobs SELECT g, g, 5, 'new' FROM generate_series(1, 200) g});
is(q1('postgres', 'SELECT capacity FROM fencing.shared_marks_info()'), '64',
	'the capacity is fencing.shared_marks');

# one backend reads scope 1's mark; another, which never wrote scope 1, uses it
is(write_err('postgres', q{UPDATE jobs SET v = 'a', tok = 5 WHERE id = 1}), '',
	'a first backend writes scope 1');
my $before = hits();
is(write_err('postgres', q{UPDATE jobs SET v = 'b', tok = 5 WHERE id = 1}), '',
	'a second backend writes scope 1');
cmp_ok(hits(), '>', $before, 'the second backend used the mark the first read');

# a takeover commits: a new backend refuses the old token
q1('postgres', q{SELECT fencing.takeover('1', 7)});
like(write_err('postgres', q{UPDATE jobs SET v = 'c', tok = 5 WHERE id = 1}),
	qr/token 5 is below the scope's mark 7/,
	'after a takeover, a backend that never wrote the scope refuses the old token');
is(write_err('postgres', q{UPDATE jobs SET v = 'c', tok = 7 WHERE id = 1}), '',
	'and accepts the new one');

# a superuser's UPDATE of the registry, which takes no scope lock
is(write_err('postgres', q{UPDATE jobs SET v = 'd', tok = 5 WHERE id = 2}), '',
	'scope 2 is read at mark 5');
q1('postgres', q{UPDATE fencing.scopes SET mark = 9 WHERE scope = '2'});
like(write_err('postgres', q{UPDATE jobs SET v = 'e', tok = 5 WHERE id = 2}),
	qr/token 5 is below the scope's mark 9/,
	'a direct UPDATE of fencing.scopes is seen by a new backend');

# 200 scopes, 64 entries: raise every tenth, then every write by its own mark
q1('postgres', q{UPDATE jobs SET v = 'warm', tok = 5 WHERE id > 2});
q1('postgres', q{SELECT fencing.takeover(g::text, 6) FROM generate_series(10, 200, 10) g});
my $ok = q1('postgres', q{
	DO $$
	DECLARE accepted int := 0; refused int := 0;
	BEGIN
		FOR i IN 3 .. 200 LOOP
			BEGIN
				UPDATE jobs SET v = 'stale', tok = 5 WHERE id = i;
				accepted := accepted + 1;
			EXCEPTION WHEN SQLSTATE 'ZF001' THEN
				refused := refused + 1;
			END;
		END LOOP;
		RAISE NOTICE 'accepted % refused %', accepted, refused;
	END $$;
	SELECT count(*) FILTER (WHERE v = 'stale' AND id % 10 = 0) AS stale_on_raised,
	       count(*) FILTER (WHERE v = 'stale' AND id % 10 <> 0) AS written
	  FROM jobs WHERE id > 2;
});
is($ok, '0|178', 'more scopes than entries: each write judged by its own mark (20 refused, 178 written)');
cmp_ok(q1('postgres', 'SELECT entries FROM fencing.shared_marks_info()'), '<=', 64,
	'the cache holds no more than its capacity');

# the same scope name in another database: its own mark
q1('other', q{INSERT INTO jobs VALUES (1, 1, 3, 'other')});
is(write_err('other', q{UPDATE jobs SET v = 'other', tok = 3 WHERE id = 1}), '',
	'scope 1 of another database has its own mark (3, not 7)');
like(write_err('postgres', q{UPDATE jobs SET v = 'x', tok = 6 WHERE id = 1}),
	qr/token 6 is below the scope's mark 7/, 'and scope 1 here keeps 7');

# a registry dropped and created again starts afresh
q1('other', q{UPDATE jobs SET v = 'other', tok = 3 WHERE id = 1});
q1('other', q{SELECT fencing.takeover('1', 50)});
q1('other', q{DROP EXTENSION fencing CASCADE; CREATE EXTENSION fencing;
	SELECT fencing.protect('jobs', 'tok', scope_column => 'shard')});
is(write_err('other', q{UPDATE jobs SET v = 'again', tok = 4 WHERE id = 1}), '',
	'a registry created again does not inherit the old marks');

# writers at the mark register in shared memory instead of locking the scope
sub scope_locks_of
{
	my ($pid_cond) = @_;
	return q1('postgres', "SELECT count(*) FROM pg_locks WHERE $pid_cond"
		  . " AND locktype = 'advisory' AND objsubid = -511");
}
q1('postgres', q{UPDATE jobs SET v = 'r', tok = 7 WHERE id = 1});    # scope 1's mark is shared
my $w = $node->background_psql('postgres');
my $wpid = $w->query_safe('SELECT pg_backend_pid()');
$w->query_safe('BEGIN');
$w->query_safe(q{UPDATE jobs SET v = 'w', tok = 7 WHERE id = 1});
is(scope_locks_of("pid = $wpid"), '0', 'a writer at a shared mark holds no scope lock');
my $t = $node->background_psql('postgres');
$t->query_until(qr/started/, "\\echo started\nSELECT fencing.takeover('1', 8);\n");
ok( $node->poll_query_until(
		'postgres', qq{
		SELECT EXISTS (SELECT 1 FROM pg_locks
		                WHERE NOT granted AND locktype = 'virtualxid'
		                  AND $wpid = ANY (pg_blocking_pids(pid)))}),
	'a takeover waits for the registered writer (pg_blocking_pids names it)');
is(q1('postgres', q{SELECT mark FROM fencing.scopes WHERE scope = '1'}), '7',
	'and has not raised the mark while the writer is in flight');
$w->query_safe('COMMIT');
ok($node->poll_query_until('postgres', q{SELECT mark = 8 FROM fencing.scopes WHERE scope = '1'}),
	'the takeover commits once the writer has');
$t->quit;

# a prepared writer: the scope lock, held by the prepared transaction (the
# writer's backend fills the shared entry again itself: each backend that
# takes in the takeover's message forgets the entry once more)
$w->query_safe(q{UPDATE jobs SET v = 'r', tok = 8 WHERE id = 1});
$w->query_safe('BEGIN');
$w->query_safe(q{UPDATE jobs SET v = 'p', tok = 8 WHERE id = 1});
is(scope_locks_of("pid = $wpid"), '0', 'a second writer registers');
$w->query_safe(q{PREPARE TRANSACTION 'fence_writer'});
is(scope_locks_of("pid IS NULL AND mode = 'ShareLock'"), '1',
	'PREPARE TRANSACTION leaves the scope lock to the prepared transaction');
like(write_err('postgres', q{SET lock_timeout = '200ms'; SELECT fencing.takeover('1', 9)}),
	qr/lock timeout/, 'a takeover waits for the prepared writer');
q1('postgres', q{COMMIT PREPARED 'fence_writer'});
is(q1('postgres', q{SELECT fencing.takeover('1', 9)}), '8',
	'and takes over once it committed');

# a bulk writer's prepared transaction: its registrations become locks, by
# the owner's lock after the first 32 (the lock table's room stays bounded)
q1('postgres', q{
	CREATE TABLE bulk (id int PRIMARY KEY, shard int NOT NULL, tok bigint, v text);
	SELECT fencing.protect('bulk', 'tok', scope_column => 'shard');
	INSERT INTO bulk SELECT g, 1000 + g, 1, 'new' FROM generate_series(1, 100) g;
});
$w->quit;
$w = $node->background_psql('postgres');
$wpid = $w->query_safe('SELECT pg_backend_pid()');
q1('postgres', q{UPDATE bulk SET v = 'warm', tok = 1});
$w->query_safe('BEGIN');
$w->query_safe(q{UPDATE bulk SET v = 'bulk', tok = 1});
cmp_ok(scope_locks_of("pid = $wpid"), '<', 100, 'a bulk writer registers part of its scopes');
$w->query_safe(q{PREPARE TRANSACTION 'fence_bulk'});
cmp_ok(scope_locks_of("pid IS NULL"), '<=', 32,
	'its prepared transaction holds at most 32 scope locks');
is(q1('postgres', q{SELECT count(*) FROM pg_locks WHERE pid IS NULL AND locktype = 'advisory'
	AND objsubid = -508 AND mode = 'ShareLock'}), '1', 'and its owner\'s lock for the rest');
like(write_err('postgres', q{SET lock_timeout = '200ms'; SELECT fencing.takeover('1100', 2)}),
	qr/lock timeout/, 'a takeover of its last scope waits for it');
q1('postgres', q{COMMIT PREPARED 'fence_bulk'});
is(q1('postgres', q{SELECT fencing.takeover('1100', 2)}), '1', 'and takes over once it committed');

# a writer of its own 40 scopes that prepares a transaction which also wrote
# one granted row of another owner's table locks that owner's scope alone:
# the other owner's other scopes are not held up (its own are, by its lock)
q1('postgres', q{
	CREATE ROLE fence_victim;
	CREATE ROLE fence_stranger;
	SELECT fencing.create_scope('v-shared', 'external', 'fence_victim'),
	       fencing.create_scope('v-other', 'external', 'fence_victim');
	SELECT count(fencing.create_scope('s' || g, 'external', 'fence_stranger')) FROM generate_series(1, 40) g;
	CREATE TABLE v_rows (sc text NOT NULL, id int, tok bigint);
	ALTER TABLE v_rows OWNER TO fence_victim;
	CREATE TABLE s_rows (sc text NOT NULL, id int, tok bigint);
	ALTER TABLE s_rows OWNER TO fence_stranger;
	SET ROLE fence_victim;
	SELECT fencing.protect('v_rows', 'tok', scope_column => 'sc');
	GRANT INSERT ON v_rows TO fence_stranger;
	INSERT INTO v_rows VALUES ('v-shared', 1, 1);
	SET ROLE fence_stranger;
	SELECT fencing.protect('s_rows', 'tok', scope_column => 'sc');
	INSERT INTO s_rows SELECT 's' || g, g, 1 FROM generate_series(1, 40) g;
});
$w->query_safe('SET ROLE fence_stranger');
$w->query_safe('BEGIN');
$w->query_safe(q{INSERT INTO s_rows SELECT 's' || g, 100 + g, 1 FROM generate_series(1, 40) g});
$w->query_safe(q{INSERT INTO v_rows VALUES ('v-shared', 2, 1)});
$w->query_safe(q{PREPARE TRANSACTION 'fence_stranger'});
$w->query_safe('RESET ROLE');
is(write_err('postgres', q{SET ROLE fence_victim; SET lock_timeout = '5s'; SELECT fencing.takeover('v-other', 5)}), '',
	'another owner\'s scope the prepared writer did not write is not held up');
like(write_err('postgres', q{SET ROLE fence_victim; SET lock_timeout = '200ms'; SELECT fencing.takeover('v-shared', 5)}),
	qr/lock timeout/, 'the scope it wrote is');
like(write_err('postgres', q{SET lock_timeout = '200ms'; SELECT fencing.takeover('s40', 5)}),
	qr/lock timeout/, 'and so are its own scopes, through its owner\'s lock');
q1('postgres', q{ROLLBACK PREPARED 'fence_stranger'});
is(q1('postgres', q{SELECT fencing.takeover('v-shared', 5)}), '1', 'all taken over once it ended');

# a registered writer whose backend is terminated holds nothing
$w->query_safe(q{UPDATE jobs SET v = 'r', tok = 9 WHERE id = 1});
$w->query_safe('BEGIN');
$w->query_safe(q{UPDATE jobs SET v = 'k', tok = 9 WHERE id = 1});
is(scope_locks_of("pid = $wpid"), '0', 'a third writer registers');
q1('postgres', "SELECT pg_terminate_backend($wpid, 5000)");
$w->quit;
is(write_err('postgres', q{SET lock_timeout = '5s'; SELECT fencing.takeover('1', 10)}), '',
	'a terminated writer holds off no takeover');

# no room: capacity 0
$node->append_conf('postgresql.conf', 'fencing.shared_marks = 0');
$node->restart;
is(q1('postgres', 'SELECT capacity, entries, hits FROM fencing.shared_marks_info()'), '0|0|0',
	'fencing.shared_marks = 0: nothing kept');
like(write_err('postgres', q{UPDATE jobs SET v = 'f', tok = 5 WHERE id = 1}),
	qr/token 5 is below the scope's mark 10/, 'and the marks are read from the table');

$node->stop;
done_testing();
