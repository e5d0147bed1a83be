# 002_backend_kill.pl: invariants I1 and I2 across a backend killed with
# SIGKILL, which makes the postmaster reset shared memory and run crash
# recovery (restart_after_crash = on); WAL not yet flushed is lost as in a
# power failure, because the WAL writer is frozen beforehand.
#
# Proves, with the issuing sessions on synchronous_commit = off, that after
# the recovery
#   1. a backend killed while its transaction holds an open
#      fence_next_epoch(): every epoch other sessions got committed is below
#      the next one, each is recorded once, the marks are the last epochs,
#      the killed transaction left no term and its scope is not left locked;
#   2. a backend killed while blocked inside fence_next_epoch() (waiting for
#      the scope lock held by another open term): the same;
#   3. a backend killed right after committing a write that raised a mark
#      with an external token: the mark survived, the old token is rejected
#      with ZF001, and the next epoch is above the mark.
# A plain async commit made just before each kill is lost (control).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('backend_kill');
my $db   = 'postgres';

sub q1 { return $node->safe_psql($db, $_[0]); }

q1( q{
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	-- writes raise this scope's mark with tokens of their own (1.2: 'issued' by default)
	SELECT fencing.create_scope('jobs', tokens => 'external');
	SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
	CREATE TABLE plain (n int);
});

my %seen;
my $max_seen = 0;
my @dups;    # epochs returned a second time

sub async_epochs
{
	my ($scope, $n) = @_;
	my $s = $node->background_psql($db);
	$s->query_safe('SET synchronous_commit = off');
	my @e;
	for (1 .. $n)
	{
		my $e = $s->query_safe("SELECT fencing.fence_next_epoch('$scope')");
		push @dups, $e if $seen{$e}++;
		$max_seen = $e if $e > $max_seen;
		push @e, $e;
	}
	$s->quit;
	return @e;
}

sub control_commit
{
	my ($n) = @_;
	my $s = $node->background_psql($db);
	$s->query_safe("SET synchronous_commit = off; INSERT INTO plain VALUES ($n)");
	$s->quit;
	return;
}

sub check_recovered
{
	my ($label, $log, $n, $scope, $last) = @_;
	like(
		$log,
		qr/terminated by signal 9: Killed.*all server processes terminated; reinitializing/s,
		"$label: the kill forced crash recovery");
	is(q1("SELECT count(*) FROM plain WHERE n = $n"),
		'0', "$label: control: the crash lost an async commit");
	is(q1("SELECT mark FROM fencing.scopes WHERE scope = '$scope'"),
		$last, "$label: the mark of '$scope' is the last epoch issued");
	my $in = join(',', keys %seen);
	is(q1("SELECT count(*) FROM fencing.terms WHERE epoch IN ($in)"),
		scalar(keys %seen), "$label: every committed epoch is recorded");
	is(q1('SELECT count(*) - count(DISTINCT epoch) FROM fencing.terms'),
		'0', "$label: no epoch is recorded twice");
	return;
}

sub next_epoch_ok
{
	my ($label, $scope) = @_;
	# a scope lock left behind would make this wait: fail fast instead
	my $next = q1(
		"SET lock_timeout = '10s'; SELECT fencing.fence_next_epoch('$scope')");
	cmp_ok($next, '>', $max_seen,
		"$label: the next epoch of '$scope' ($next) is above every epoch returned before ($max_seen)"
	);
	push @dups, $next if $seen{$next}++;
	is("@dups", '', "$label: no epoch was returned twice");
	$max_seen = $next if $next > $max_seen;
	return $next;
}

# --- 1. kill a backend whose transaction holds an open term.
{
	my $t1 = $node->background_psql($db);
	my $apid = $t1->query_safe('SELECT pg_backend_pid()');
	$t1->query_safe('BEGIN');
	my $open = $t1->query_safe("SELECT fencing.fence_next_epoch('k')");

	my $ww = freeze_walwriter($node);
	my @e = async_epochs('j', 40);
	cmp_ok($e[0], '>', $open, '1: epochs issued meanwhile are above the open one');
	control_commit(1);
	my $log = crash_kill($node, $apid, $ww);
	quit_dead($t1);

	check_recovered('1', $log, 1, 'j', $e[-1]);
	is(q1("SELECT count(*) FROM fencing.terms WHERE scope = 'k'"),
		'0', '1: the killed transaction left no term');
	my $k = next_epoch_ok('1', 'k');
	is(q1("SELECT mark FROM fencing.scopes WHERE scope = 'k'"),
		$k, "1: the killed transaction's scope takes a new term");
}

# --- 2. kill a backend blocked inside fence_next_epoch().
{
	my $t1 = $node->background_psql($db);
	$t1->query_safe('BEGIN');
	$t1->query_safe("SELECT fencing.fence_next_epoch('w')");

	my $c = $node->background_psql($db);
	my $cpid = $c->query_safe('SELECT pg_backend_pid()');
	$c->query_safe('SET synchronous_commit = off');
	$c->query_until(qr/waiting/,
		"\\echo waiting\nSELECT fencing.fence_next_epoch('w');\n");
	ok( $node->poll_query_until(
			$db,
			"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $cpid"
		),
		'2: the second fence_next_epoch waits for the open term');

	my $ww = freeze_walwriter($node);
	my @e = async_epochs('x', 40);
	control_commit(2);
	my $log = crash_kill($node, $cpid, $ww);
	quit_dead($t1);
	quit_dead($c);

	check_recovered('2', $log, 2, 'x', $e[-1]);
	is(q1("SELECT count(*) FROM fencing.terms WHERE scope = 'w'"),
		'0', '2: neither the open nor the blocked call left a term');
	next_epoch_ok('2', 'w');
}

# --- 3. kill a backend right after it raised a mark with an external token.
{
	my $base = next_epoch_ok('3 (setup)', 'jobs');
	q1("INSERT INTO jobs VALUES (1, $base, 'one')");
	my $tok = $base + 1000;

	my $ww = freeze_walwriter($node);
	my $w  = $node->background_psql($db);
	my $wpid = $w->query_safe('SELECT pg_backend_pid()');
	$w->query_safe('SET synchronous_commit = off');
	$w->query_safe(
		"BEGIN; SELECT fencing.use_token('jobs', $tok); UPDATE jobs SET v = 'raised' WHERE id = 1; COMMIT"
	);
	control_commit(3);
	my $log = crash_kill($node, $wpid, $ww);
	quit_dead($w);

	like($log, qr/terminated by signal 9: Killed/,
		'3: the kill forced crash recovery');
	is(q1("SELECT count(*) FROM plain WHERE n = 3"),
		'0', '3: control: the crash lost an async commit');
	is(q1("SELECT mark FROM fencing.scopes WHERE scope = 'jobs'"),
		$tok, '3: the mark raised by the killed backend survived');
	is(q1('SELECT tok || v FROM jobs WHERE id = 1'),
		"${tok}raised", '3: the write that raised it survived');
	is( sqlstate_error(
			$node, $db,
			"BEGIN; SELECT fencing.use_token('jobs', $base); UPDATE jobs SET v = 'stale' WHERE id = 1; COMMIT;"
		),
		'ZF001',
		'3: the previous term is rejected after recovery (ZF001)');
	my $next = q1("SELECT fencing.fence_next_epoch('jobs')");
	cmp_ok($next, '>', $tok, '3: the next epoch is above the raised mark');
}

$node->stop;
done_testing();
