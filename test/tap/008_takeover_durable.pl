# 008_takeover_durable.pl: invariant I2 (the mark only rises) across an
# immediate stop, for fencing.takeover() and for the raises INSERT ... ON
# CONFLICT defers until its row is written.
#
# Each case runs in a crash window of its own: the WAL writer frozen, a
# session with synchronous_commit = off makes the writes under test, then an
# ordinary async commit of a plain row (control), then "pg_ctl stop -m
# immediate" and a restart.  The control is lost every time, so whatever
# survived was flushed because the extension forced it.  Proves that
#   - a takeover that returned survives: of a new scope (created with tokens
#     = 'external', the call returned NULL), of an existing one (it returned
#     the previous mark), of two scopes in one transaction that ends with
#     SET LOCAL synchronous_commit = off, and through a function declared
#     SET synchronous_commit = off; afterwards the old holder's token is
#     rejected with ZF001, by takeover() and by the protected table, and the
#     new holder's token is accepted;
#   - on a table with a constant scope, INSERT ... ON CONFLICT DO UPDATE that
#     writes a row with a token above the mark (inserted: the raise deferred
#     to the AFTER INSERT trigger; or updated on conflict) survives together
#     with the raised mark, and a lower token is rejected after the restart
#     (ZF001), also through ON CONFLICT DO UPDATE; the same on a table with a
#     scope column, one statement raising an existing scope and creating one;
#   - INSERT ... ON CONFLICT DO NOTHING whose row conflicts (as the session's
#     first fenced statement, which loads the library mid-statement, and
#     again), and DO UPDATE ... WHERE false, write nothing and raise nothing,
#     before and after the crash: the mark and the row are unchanged, an
#     async commit made before them is lost too (they forced no flush, which
#     a raise does), and a token between the mark and theirs is accepted.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('takeover_durable');
my $db   = 'postgres';

sub q1 { return $node->safe_psql($db, $_[0]); }

sub mark
{
	my ($scope) = @_;
	return q1("SELECT mark FROM fencing.scopes WHERE scope = '$scope'");
}

# Run $body with a fresh session that has synchronous_commit = off while the
# WAL writer is frozen, then commit the control in that session, crash and
# restart; checks that the crash lost the control.
sub crash_window
{
	my ($label, $body) = @_;
	my $ww = freeze_walwriter($node);
	my $s  = $node->background_psql($db);
	$s->query_safe('SET synchronous_commit = off');
	$body->($s);
	$s->query_safe("INSERT INTO plain VALUES ('$label')");    # control
	$s->quit;
	crash_immediate($node, $ww);
	is(q1("SELECT count(*) FROM plain WHERE label = '$label'"),
		'0', "$label: control: the crash lost the async commit made last");
	return;
}

$node->safe_psql(
	$db, q{
	CREATE TABLE plain (label text);
	-- the lock service's scope: its holder writes this table
	SELECT fencing.create_scope('held', tokens => 'external');
	CREATE TABLE work (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('work', 'tok', scope => 'held');
	SELECT fencing.create_scope('second', tokens => 'external');
	-- a lock service client's wrapper
	CREATE FUNCTION app_takeover(s text, t bigint) RETURNS bigint
	LANGUAGE plpgsql SET synchronous_commit = off
	AS $$ BEGIN RETURN fencing.takeover(s, t); END $$;
	-- ON CONFLICT: a constant scope, and a scope column
	SELECT fencing.create_scope('qs', tokens => 'external');
	CREATE TABLE q (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('q', 'tok', scope => 'qs');
	SELECT fencing.create_scope('sc_a', tokens => 'external');
	CREATE TABLE sc (id int PRIMARY KEY, scope text, tok bigint, v text);
	SELECT fencing.protect('sc', 'tok', scope_column => 'scope');
});

# Durable starting state (synchronous_commit = on): the old holder of
# 'held' took over with 100 and wrote a row.
is(q1("SELECT fencing.takeover('held', 100)"),
	'0', 'setup: takeover of a created scope returns its mark (0)');
q1("INSERT INTO work VALUES (1, 100, 'old holder')");
q1("SELECT fencing.takeover('second', 50)");
q1("INSERT INTO q VALUES (1, 10, 'one')");
q1("INSERT INTO sc VALUES (1, 'sc_a', 10, 'one')");
is(mark('qs'),   '10', 'setup: the mark of qs is 10');
is(mark('sc_a'), '10', 'setup: the mark of sc_a is 10');

# ---------------------------------------------------------------- takeover

crash_window(
	'takeover of a new scope',
	sub {
		my ($s) = @_;
		is($s->query_safe("SELECT fencing.takeover('fresh', 7)"),
			'', 'takeover of a new scope returned NULL');
	});
is(q1("SELECT mark || ' ' || tokens FROM fencing.scopes WHERE scope = 'fresh'"),
	'7 external',
	'the new scope survived the immediate stop: mark at the token, tokens external');
is(sqlstate_error($node, $db, "SELECT fencing.takeover('fresh', 6)"),
	'ZF001', 'after restart, a token below the new scope\'s mark is rejected (ZF001)');

crash_window(
	'takeover of an existing scope',
	sub {
		my ($s) = @_;
		is($s->query_safe("SELECT fencing.takeover('held', 200)"),
			'100', 'takeover of an existing scope returned the previous mark');
	});
is(mark('held'), '200', 'the raised mark survived the immediate stop');
is(sqlstate_error($node, $db, "SELECT fencing.takeover('held', 100)"),
	'ZF001', 'after restart, the old holder\'s takeover is rejected (ZF001)');
is(sqlstate_error($node, $db, "SELECT fencing.takeover('held', 150)"),
	'ZF001', 'after restart, a token between the old and the new one is rejected (ZF001)');
is( sqlstate_error(
		$node, $db, "UPDATE work SET tok = 100, v = 'stale' WHERE id = 1"
	),
	'ZF001',
	'after restart, the old holder\'s write (its token in the row) is rejected (ZF001)');
is(sqlstate_error($node, $db, "INSERT INTO work VALUES (2, 100, 'stale')"),
	'ZF001', 'after restart, the old holder\'s insert is rejected (ZF001)');
is(q1("SELECT fencing.takeover('held', 200)"),
	'200', 'after restart, a retried takeover with the mark is accepted');
q1("INSERT INTO work VALUES (2, 200, 'new holder')");
is(q1("SELECT string_agg(id || ':' || tok || ':' || v, ',' ORDER BY id) FROM work"),
	'1:100:old holder,2:200:new holder',
	'after restart, the new holder writes; the rejected writes changed nothing');

crash_window(
	'two takeovers in one transaction',
	sub {
		my ($s) = @_;
		$s->query_safe('BEGIN');
		is($s->query_safe("SELECT fencing.takeover('second', 60)"),
			'50', 'takeover of an existing scope in a transaction');
		is($s->query_safe("SELECT fencing.takeover('third', 5)"),
			'', 'takeover of a new scope in the same transaction');
		$s->query_safe('SET LOCAL synchronous_commit = off');
		$s->query_safe('COMMIT');
	});
is(q1("SELECT string_agg(scope || ':' || mark || ':' || tokens, ',' ORDER BY scope COLLATE \"C\") FROM fencing.scopes WHERE scope IN ('second', 'third')"),
	'second:60:external,third:5:external',
	'both takeovers of the transaction survived the immediate stop');
is(sqlstate_error($node, $db, "SELECT fencing.takeover('second', 50)"),
	'ZF001', 'after restart, the old holder of the existing scope is rejected (ZF001)');

crash_window(
	'takeover through a function',
	sub {
		my ($s) = @_;
		is($s->query_safe("SELECT app_takeover('held', 300)"),
			'200',
			'takeover through a function declared SET synchronous_commit = off');
	});
is(mark('held'), '300',
	'the mark raised through the function survived the immediate stop');
is(sqlstate_error($node, $db, "INSERT INTO work VALUES (3, 200, 'stale')"),
	'ZF001', 'after restart, the previous holder\'s write is rejected (ZF001)');
is(sqlstate_error($node, $db, "SELECT app_takeover('held', 200)"),
	'ZF001', 'after restart, the previous holder\'s takeover is rejected (ZF001)');

# ------------------------------------------------ INSERT ... ON CONFLICT

my $row1 = "SELECT tok || ':' || v FROM q WHERE id = 1";

crash_window(
	'ON CONFLICT writing nothing',
	sub {
		my ($s) = @_;
		# before the conflicting statements: lost unless one of them flushes
		$s->query_safe("INSERT INTO plain VALUES ('before nothing')");
		# the session's first fenced statement: loads the library in the middle
		$s->query_safe(
			"INSERT INTO q VALUES (1, 50, 'loading') ON CONFLICT (id) DO NOTHING");
		is(mark('qs'), '10',
			'a conflicting DO NOTHING that loaded the library did not raise the mark');
		$s->query_safe(
			"INSERT INTO q VALUES (1, 60, 'nothing') ON CONFLICT (id) DO NOTHING");
		is(mark('qs'), '10', 'a conflicting DO NOTHING did not raise the mark');
		$s->query_safe(
			"INSERT INTO q VALUES (1, 70, 'where false') ON CONFLICT (id) DO UPDATE SET tok = EXCLUDED.tok, v = EXCLUDED.v WHERE false"
		);
		is(mark('qs'), '10',
			'a conflicting DO UPDATE ... WHERE false did not raise the mark');
		is(q1($row1), '10:one', 'none of them wrote the row');
	});
is(q1("SELECT count(*) FROM plain WHERE label = 'before nothing'"),
	'0', 'the crash lost an async commit made before them: they forced no flush');
is(mark('qs'), '10', 'after restart, the mark is still where it was');
is(q1($row1), '10:one', 'after restart, the row is unchanged');
q1("INSERT INTO q VALUES (2, 20, 'between')");
is(q1('SELECT tok FROM q WHERE id = 2'),
	'20', 'after restart, a token between the mark and theirs is accepted');

crash_window(
	'ON CONFLICT DO UPDATE inserting',
	sub {
		my ($s) = @_;
		$s->query_safe(
			"INSERT INTO q VALUES (3, 40, 'upsert new') ON CONFLICT (id) DO UPDATE SET tok = EXCLUDED.tok, v = EXCLUDED.v"
		);
		is(mark('qs'), '40', 'the inserted row raised the mark (deferred raise)');
	});
is(mark('qs'), '40', 'the deferred raise survived the immediate stop');
is(q1("SELECT tok || ':' || v FROM q WHERE id = 3"),
	'40:upsert new', 'the row that raised it survived with it');
is(sqlstate_error($node, $db, "INSERT INTO q VALUES (4, 30, 'stale')"),
	'ZF001', 'after restart, a lower token is rejected (ZF001)');
is( sqlstate_error(
		$node, $db,
		"INSERT INTO q VALUES (5, 30, 'stale') ON CONFLICT (id) DO UPDATE SET tok = EXCLUDED.tok, v = EXCLUDED.v"
	),
	'ZF001',
	'after restart, a lower token is rejected through ON CONFLICT DO UPDATE too (ZF001)');

crash_window(
	'ON CONFLICT DO UPDATE updating',
	sub {
		my ($s) = @_;
		$s->query_safe(
			"INSERT INTO q VALUES (1, 55, 'upsert conflict') ON CONFLICT (id) DO UPDATE SET tok = EXCLUDED.tok, v = EXCLUDED.v"
		);
		is(mark('qs'), '55', 'the conflicting row\'s update raised the mark');
	});
is(mark('qs'), '55', 'the raise by the update on conflict survived the immediate stop');
is(q1($row1), '55:upsert conflict', 'the updated row survived with it');
is( sqlstate_error(
		$node, $db,
		"INSERT INTO q VALUES (1, 45, 'stale') ON CONFLICT (id) DO UPDATE SET tok = EXCLUDED.tok, v = EXCLUDED.v"
	),
	'ZF001',
	'after restart, a lower token is rejected (ZF001)');
is(q1("SELECT string_agg(id || ':' || tok || ':' || v, ',' ORDER BY id) FROM q"),
	'1:55:upsert conflict,2:20:between,3:40:upsert new',
	'the rejected writes changed nothing');

crash_window(
	'scope column ON CONFLICT DO UPDATE',
	sub {
		my ($s) = @_;
		$s->query_safe(
			"INSERT INTO sc VALUES (2, 'sc_a', 40, 'raise'), (3, 'sc_b', 25, 'new scope') ON CONFLICT (id) DO UPDATE SET tok = EXCLUDED.tok, v = EXCLUDED.v"
		);
	});
is(q1("SELECT string_agg(scope || ':' || mark || ':' || tokens, ',' ORDER BY scope COLLATE \"C\") FROM fencing.scopes WHERE scope IN ('sc_a', 'sc_b')"),
	'sc_a:40:external,sc_b:25:external',
	'scope column: the raised mark and the created scope survived the immediate stop');
is(q1("SELECT string_agg(id || ':' || scope || ':' || tok, ',' ORDER BY id) FROM sc"),
	'1:sc_a:10,2:sc_a:40,3:sc_b:25',
	'scope column: the rows that raised them survived');
is( sqlstate_error(
		$node, $db,
		"INSERT INTO sc VALUES (4, 'sc_a', 30, 'stale') ON CONFLICT (id) DO UPDATE SET tok = EXCLUDED.tok"
	),
	'ZF001',
	'scope column: after restart, a lower token is rejected (ZF001)');
is(sqlstate_error($node, $db, "INSERT INTO sc VALUES (4, 'sc_b', 20, 'stale')"),
	'ZF001', 'scope column: after restart, a token below the new scope\'s mark is rejected (ZF001)');

$node->stop;
done_testing();
