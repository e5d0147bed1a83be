# 008_takeover_durable.pl: invariant I2 (the mark only rises) across an
# immediate stop, for the raises that are not a term or a plain write:
# fencing.takeover() and the raises an INSERT ... ON CONFLICT defers to the
# rows it writes.
#
# Each raise is made by a session with synchronous_commit = off, the WAL
# writer frozen (nothing flushes WAL behind the test's back, see
# FencingCrash.pm), then "pg_ctl stop -m immediate" and a restart: one crash
# per raise, so no later flush carries it.  Proves that
#   - every takeover() that returned survived: of an existing external scope
#     (its old holder is then rejected, ZF001), of a new scope (created
#     'external' at the token), and one made durable although the
#     transaction set synchronous_commit = off after the call;
#   - an upsert (ON CONFLICT DO UPDATE) that raised a scope's mark, by a
#     constant scope and by a scope column, survived with its row, and the
#     old token is rejected after the restart;
#   - an ON CONFLICT DO NOTHING whose row conflicted raised nothing, before
#     and after the crash;
#   - the window is real: in each round an async commit made after the raise
#     is lost.
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

# Durable starting state (synchronous_commit = on).
q1(q{
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.create_scope('etcd', tokens => 'external');
	SELECT fencing.protect('jobs', 'tok', scope => 'etcd');
	INSERT INTO jobs VALUES (1, 100, 'old holder');
	SELECT fencing.create_scope('zk', tokens => 'external');
	CREATE TABLE kv (k int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.create_scope('kv', tokens => 'external');
	SELECT fencing.protect('kv', 'tok', scope => 'kv');
	INSERT INTO kv VALUES (1, 10, 'one');
	CREATE TABLE tenants (tenant text, k int, tok bigint, v text, PRIMARY KEY (tenant, k));
	SELECT fencing.protect('tenants', 'tok', scope_column => 'tenant');
	INSERT INTO tenants VALUES ('t1', 1, 10, 'one');
	CREATE TABLE plain (n int);
});
is(mark('etcd'), '100', 'etcd starts at the old holder\'s token');
is(mark('kv'),   '10',  'kv starts at 10');
is(mark('t1'),   '10',  'tenant t1 starts at 10');

# One crash per raise, so that no later forced flush carries an earlier
# raise to disk: freeze the WAL writer, run the statements in a session with
# synchronous_commit = off, make an async control commit after them, crash,
# and check that the control was lost.  Returns the statements' outputs.
my $round = 0;
sub crash_round
{
	my (@sql) = @_;
	my $ww = freeze_walwriter($node);
	my $w  = $node->background_psql($db);
	$w->query_safe('SET synchronous_commit = off');
	my @out = map { $w->query_safe($_) } @sql;
	$round++;
	$w->query_safe("INSERT INTO plain VALUES ($round)");    # control
	$w->quit;
	crash_immediate($node, $ww);
	is(q1("SELECT count(*) FROM plain WHERE n = $round"),
		'0', "round $round, control: the crash lost the async commit made after the raise");
	return @out;
}

# takeover() of an existing external scope: the old holder is fenced
my ($prev) = crash_round("SELECT fencing.takeover('etcd', 250)");
is($prev, '100', 'takeover of etcd returned the previous mark');
is(mark('etcd'), '250', 'the takeover of etcd survived the immediate stop');
is(sqlstate_error($node, $db, "UPDATE jobs SET v = 'zombie', tok = 100 WHERE id = 1"),
	'ZF001', 'after restart, the old holder (100) is rejected');

# takeover() of a new scope: created external, at the token
($prev) = crash_round("SELECT fencing.takeover('brand-new', 42) IS NULL");
is($prev, 't', 'takeover of a new scope returned NULL');
is(q1("SELECT tokens || ' ' || mark FROM fencing.scopes WHERE scope = 'brand-new'"),
	'external 42', 'the scope created by takeover survived, external, at its token');

# takeover() in a transaction that turns synchronous_commit off after it
($prev) = crash_round(
	"BEGIN; SELECT fencing.takeover('zk', 7); SET LOCAL synchronous_commit = off; COMMIT;");
is($prev, '0', 'takeover of zk returned the previous mark');
is(mark('zk'), '7', 'the takeover made with SET LOCAL synchronous_commit = off after it survived');

# ON CONFLICT DO UPDATE raising a constant scope's mark; DO NOTHING with a
# conflicting row raising nothing
my (undef, undef, $before) = crash_round(
	"INSERT INTO kv VALUES (1, 20, 'upserted') ON CONFLICT (k) DO UPDATE SET tok = EXCLUDED.tok, v = EXCLUDED.v",
	"INSERT INTO kv VALUES (1, 30, 'conflicts') ON CONFLICT (k) DO NOTHING",
	"SELECT mark FROM fencing.scopes WHERE scope = 'kv'");
is($before, '20', 'before the crash: the upsert raised kv to 20, DO NOTHING did not raise it to 30');
is(mark('kv'), '20', 'the mark raised by the upsert survived');
is(q1('SELECT tok || v FROM kv WHERE k = 1'), '20upserted', 'with the row it wrote');
is(sqlstate_error($node, $db,
		"INSERT INTO kv VALUES (1, 10, 'zombie') ON CONFLICT (k) DO UPDATE SET tok = EXCLUDED.tok, v = EXCLUDED.v"),
	'ZF001', 'after restart, an upsert with the old token (10) is rejected');
q1("INSERT INTO kv VALUES (1, 30, 'conflicts') ON CONFLICT (k) DO NOTHING");
is(mark('kv'), '20', 'after restart, a conflicting DO NOTHING with 30 still raises nothing');

# ON CONFLICT DO UPDATE raising a scope named by a column
crash_round(
	"INSERT INTO tenants VALUES ('t1', 1, 20, 'upserted') ON CONFLICT (tenant, k) DO UPDATE SET tok = EXCLUDED.tok, v = EXCLUDED.v"
);
is(mark('t1'), '20', 'the mark raised through a scope column survived');
is(q1("SELECT tok || v FROM tenants WHERE tenant = 't1' AND k = 1"),
	'20upserted', 'with the row it wrote');
is(sqlstate_error($node, $db, "INSERT INTO tenants VALUES ('t1', 2, 10, 'zombie')"),
	'ZF001', 'after restart, tenant t1\'s old token (10) is rejected');

$node->stop;
done_testing();
