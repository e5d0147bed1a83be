# 001_epoch_crash.pl: invariant I1 (monotonic terms) across an immediate stop.
#
# Proves that every epoch fence_next_epoch() returned from a committed call
# is below the first epoch issued after "pg_ctl stop -m immediate" and a
# restart, that it is still recorded in fencing.terms and is the scope's mark,
# and that no epoch is ever recorded twice, in the situation of the field
# guide's nextval trap (section 3):
#   - another session holds an open transaction that took a value from the
#     clock (an open fence_next_epoch(), or a superuser's bare nextval()),
#     so the WAL record that covers the next values is not flushed by anyone;
#   - the issuing session runs with synchronous_commit = off;
#   - the WAL writer is frozen, so only a flush forced by the extension
#     makes anything durable.
# The same for the terms acquire_lease() grants, with their leases (1.3).
# Controls show that the trap is real (a bare nextval() is handed out again)
# and that the crash window loses an ordinary async commit.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('epoch_crash');

my $max_seen = 0;
my %seen;
my @dups;    # epochs returned a second time

# Check I1 after a restart: the next epoch is above all seen, and every seen
# epoch is recorded exactly once.
sub check_after_restart
{
	my ($label, $scope) = @_;
	my $next =
	  $node->safe_psql('postgres', "SELECT fencing.fence_next_epoch('$scope')");
	cmp_ok($next, '>', $max_seen,
		"$label: first epoch after restart ($next) is above every epoch returned before ($max_seen)"
	);
	push @dups, $next if $seen{$next};
	$seen{$next} = 1;
	is("@dups", '', "$label: no epoch was returned twice");
	$max_seen = $next if $next > $max_seen;

	my $in = join(',', sort { $a <=> $b } keys %seen);
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM fencing.terms WHERE epoch IN ($in)"),
		scalar(keys %seen),
		"$label: every epoch returned so far is recorded in fencing.terms");
	is( $node->safe_psql('postgres',
			'SELECT count(*) - count(DISTINCT epoch) FROM fencing.terms'),
		'0', "$label: no epoch is recorded twice");
	return;
}

sub take
{
	my ($session, $scope) = @_;
	my $e = $session->query_safe("SELECT fencing.fence_next_epoch('$scope')");
	push @dups, $e if $seen{$e};
	$seen{$e} = 1;
	$max_seen = $e if $e > $max_seen;
	return $e;
}

# --- Control: the trap exists for a bare nextval() on a fresh clock.
$node->safe_psql('postgres', 'CREATE DATABASE ctl');
$node->safe_psql('ctl', 'CREATE EXTENSION fencing');
{
	my $ww = freeze_walwriter($node);
	my $t1 = $node->background_psql('ctl');
	$t1->query_safe('BEGIN');
	my $v1 = $t1->query_safe("SELECT nextval('fencing.epoch_seq')");
	my $v2 = $node->safe_psql('ctl', "SELECT nextval('fencing.epoch_seq')");
	cmp_ok($v2, '>', $v1, 'control: second bare nextval is above the first');
	crash_immediate($node, $ww);
	quit_dead($t1);
	my $v3 = $node->safe_psql('ctl', "SELECT nextval('fencing.epoch_seq')");
	cmp_ok($v3, '<=', $v2,
		"control: after an immediate stop a bare nextval hands out $v3 again (<= $v2): the trap is real"
	);
}

# --- T1 leaves a term of scope 'a' open, T2 takes one of scope 'b' in
# autocommit (synchronous_commit on, then off), immediate stop.
for my $sync ('on', 'off')
{
	my $t1 = $node->background_psql('postgres');
	$t1->query_safe('BEGIN');
	my $e1 = take($t1, 'a');    # left open: never committed

	my $ww = freeze_walwriter($node);

	my $t2 = $node->background_psql('postgres');
	$t2->query_safe("SET synchronous_commit = $sync");
	my $e2 = take($t2, 'b');
	cmp_ok($e2, '>', $e1, "sync=$sync: T2's epoch is above T1's open one");
	$t2->quit;

	crash_immediate($node, $ww);
	quit_dead($t1);
	delete $seen{$e1};    # T1 never committed: its epoch was not issued
	check_after_restart("sync=$sync, T1 open", 'b');
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM fencing.terms WHERE epoch = $e1"),
		'0', "sync=$sync: the uncommitted epoch $e1 left no term");
}

# --- Rounds of 40 epochs with synchronous_commit = off and the WAL writer
# frozen; T1 holds an open fence_next_epoch(), a bare nextval(), or nothing.
# A sequence WAL-logs 32 values ahead, so 40 epochs take values beyond what
# any record flushed before the round covers: only the extension's forced
# flush can keep them from being handed out again.
$node->safe_psql('postgres', 'CREATE TABLE plain (round int)');
my $round = 0;
for my $holder ('fence', 'nextval', 'none')
{
	$round++;
	my $t1;
	if ($holder ne 'none')
	{
		$t1 = $node->background_psql('postgres');
		$t1->query_safe('BEGIN');
		$t1->query_safe(
			$holder eq 'fence'
			? "SELECT fencing.fence_next_epoch('held')"
			: "SELECT nextval('fencing.epoch_seq')");
	}

	my $ww = freeze_walwriter($node);
	my $t2 = $node->background_psql('postgres');
	$t2->query_safe('SET synchronous_commit = off');
	my @epochs;
	push @epochs, take($t2, $_ % 2 ? 'r1' : 'r2') for 1 .. 40;
	my $last_r1 = $epochs[-2];
	my $last_r2 = $epochs[-1];
	is_deeply([ sort { $a <=> $b } @epochs ],
		\@epochs, "round $round ($holder): 40 epochs strictly increase");
	# an ordinary async commit after them: the crash must lose it
	$t2->query_safe("INSERT INTO plain VALUES ($round)");
	$t2->quit;

	crash_immediate($node, $ww);
	quit_dead($t1) if $t1;

	is($node->safe_psql('postgres', "SELECT count(*) FROM plain WHERE round = $round"),
		'0', "round $round ($holder): control: the crash lost an async commit");
	is( $node->safe_psql('postgres',
			"SELECT string_agg(mark::text, ',' ORDER BY scope COLLATE \"C\") FROM fencing.scopes WHERE scope IN ('r1', 'r2')"
		),
		"$last_r1,$last_r2",
		"round $round ($holder): the marks are the last epochs issued");
	check_after_restart("round $round ($holder)", 'r1');
}

# --- Lease grants: since 1.3 acquire_lease() writes the lease, the term and
# the mark itself (no SPI).  With synchronous_commit = off and the WAL
# writer frozen, every term it granted survives an immediate stop, recorded
# with its lease, and is never granted again.
{
	my $ww = freeze_walwriter($node);
	my $t2 = $node->background_psql('postgres');
	$t2->query_safe('SET synchronous_commit = off');
	my %last;
	my $refused = 0;
	for my $i (1 .. 20)
	{
		my $scope = 'lease' . ($i % 2);
		# the 1 ms lease of the call before on this scope has expired
		$t2->query_safe('SELECT pg_sleep(0.002)');
		my $g = $t2->query_safe(
			"SELECT granted || ' ' || term FROM fencing.acquire_lease('$scope', 'h$i', '1 millisecond')");
		my ($granted, $term) = split / /, $g;
		$refused++ if $granted ne 'true';
		push @dups, $term if $seen{$term};
		$seen{$term} = 1;
		$max_seen = $term if $term > $max_seen;
		$last{$scope} = "h$i:$term";
	}
	is($refused, 0, 'lease grants: every acquire was granted (a new term each)');
	$t2->query_safe('INSERT INTO plain VALUES (100)');
	$t2->quit;

	crash_immediate($node, $ww);

	is($node->safe_psql('postgres', 'SELECT count(*) FROM plain WHERE round = 100'),
		'0', 'lease grants: control: the crash lost an async commit');
	is( $node->safe_psql('postgres',
			"SELECT string_agg(holder || ':' || term, ',' ORDER BY scope COLLATE \"C\") FROM fencing.leases WHERE scope IN ('lease0', 'lease1')"
		),
		"$last{lease0},$last{lease1}",
		'lease grants: each lease has the holder and term of its last grant');
	is( $node->safe_psql('postgres',
			"SELECT string_agg(mark::text, ',' ORDER BY scope COLLATE \"C\") FROM fencing.scopes WHERE scope IN ('lease0', 'lease1')"
		),
		join(',', map { (split /:/, $last{$_})[1] } 'lease0', 'lease1'),
		'lease grants: each scope\'s mark is its last granted term');
	check_after_restart('lease grants', 'lease1');
	my $next = $node->safe_psql('postgres',
		"SELECT term FROM fencing.acquire_lease('lease0', 'after-crash', '1 minute')");
	cmp_ok($next, '>', $max_seen, 'lease grants: the first grant after the restart is above every term before');
}

$node->stop;
done_testing();
