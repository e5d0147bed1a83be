# 006_async_failover.pl: a primary with an asynchronous standby that misses
# the last commits.
#
# The standby's WAL receiver is stopped (primary_conninfo = ''), the old
# primary goes on issuing terms and raising marks, then crashes (immediate
# stop) and the standby is promoted: everything after the receiver stopped
# is lost (controls show it, and that the sequence went back).  Proves that
#   - no term is ever handed out twice: every term the new primary issues,
#     in the scopes the old one used after the cut and in the others, is
#     above every term the old primary returned (terms carry the timeline);
#     a scope at the band's edge (mark 2^40 - 1) gets no term on the old
#     primary (ZF007): its next term, 2^40, is the first the new one issues;
#   - a fenced writer stays fenced once the new leader takes over: the old
#     primary's latest leader, and a writer it had fenced, are rejected
#     (ZF001) on the new primary after the new leader's term, in the term
#     scope and in a lease's scope.
#   - before any new term, a writer fenced by a lost term is admitted again
#     (a control); fence_older_timelines() lifts every 'issued' scope to the
#     floor of the new timeline (bounded per call; it waits for a writer in
#     flight at the old mark, whose committed write stays), after which it is
#     rejected, and fencing.health lists the scopes until then.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "autovacuum = off\n");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION fencing');
$primary->backup('bk');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;

sub q1 { return $primary->safe_psql('postgres', $_[0]); }

my %issued;      # scope => [terms returned by either primary]
my %old_max;     # scope => highest term the old primary returned
sub record_term
{
	my ($scope, $e) = @_;
	push @{ $issued{$scope} }, $e;
	return $e;
}
sub take_on
{
	my ($node, $scope, $holder) = @_;
	return record_term($scope,
		$node->safe_psql('postgres',
			"SET synchronous_commit = off; SELECT fencing.fence_next_epoch('$scope', '$holder')"));
}

q1(q{
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
	CREATE TABLE leased (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('leased', 'tok', scope => 'leased');
	CREATE TABLE plain (n int);
});

# --- Replicated: a few terms, a leader writing, a lease.
take_on($primary, 'jobs', "early-$_") for 1 .. 5;
take_on($primary, 'other', "early-$_") for 1 .. 5;
my $replicated = record_term('leased',
	q1("SELECT term FROM fencing.acquire_lease('leased', 'worker-a', '1 second')"));
q1("INSERT INTO leased VALUES (1, $replicated, 'worker-a')");
q1("INSERT INTO jobs VALUES (1, $issued{jobs}[-1], 'replicated leader')");
# A scope at the band's edge: its lock service's token is 2^40 - 1, the last
# term of timeline 1's band.
q1("SELECT fencing.create_scope('edge', tokens => 'external')");
q1("SELECT fencing.takeover('edge', 1099511627775)");
$primary->wait_for_catchup($standby);
my $replicated_mark = q1("SELECT mark FROM fencing.scopes WHERE scope = 'jobs'");

# --- Cut the standby off: no WAL reaches it from here on.
$standby->append_conf('postgresql.conf', "primary_conninfo = ''\n");
$standby->reload;
$standby->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
  or die 'WAL receiver did not stop';

# The old primary goes on: many terms (more than the 32 values a sequence
# WAL-logs ahead), a writer fenced, a lease expired and taken over.
take_on($primary, 'jobs', "lost-$_") for 1 .. 40;
my $fenced_writer = $issued{jobs}[-20];    # fenced by the 19 terms after it
take_on($primary, 'other', "lost-$_") for 1 .. 40;
take_on($primary, 'fresh', "lost-$_") for 1 .. 3;    # a scope the standby never saw
my $old_leader = $issued{jobs}[-1];
q1("INSERT INTO jobs VALUES (2, $old_leader, 'old primary leader')");
is(sqlstate_error($primary, 'postgres', "INSERT INTO jobs VALUES (3, $fenced_writer, 'stale')"),
	'ZF001', "on the old primary the writer holding $fenced_writer is fenced");
sleep 2;    # worker-a's lease expires
my $lost_lease = record_term('leased',
	q1("SELECT term FROM fencing.acquire_lease('leased', 'worker-b', '1 hour')"));
q1("INSERT INTO leased VALUES (2, $lost_lease, 'worker-b')");
# Its next term would be 2^40, the limit of timeline 1's band, above which
# the promoted standby issues: the old primary refuses it.
my ($edge_rc, $edge_out, $edge_err) = $primary->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT fencing.fence_next_epoch('edge')");
record_term('edge', $edge_out) if $edge_rc == 0;    # 1.4 issued 2^40 here
like($edge_err, qr/ERROR:\s+ZF007:/,
	"on the old primary a scope at the band's edge (mark 2^40 - 1) gets no term (ZF007)");
q1('INSERT INTO plain VALUES (1)');
$old_max{$_} = (sort { $b <=> $a } @{ $issued{$_} })[0] for keys %issued;
my $old_seq = q1('SELECT last_value FROM fencing.epoch_seq');

# --- Crash the old primary, promote the cut-off standby.
$primary->stop('immediate');
$standby->promote;
my $new = $standby;
sub q2 { return $new->safe_psql('postgres', $_[0]); }

# Controls: the last commits are lost, the clock and the mark went back.
is(q2('SELECT count(*) FROM plain'), '0', 'control: the commits after the cut are lost');
is(q2("SELECT count(*) FROM fencing.terms WHERE holder LIKE 'lost-%'"), '0',
	'control: so are the terms the old primary issued after the cut');
is(q2("SELECT mark FROM fencing.scopes WHERE scope = 'jobs'"), $replicated_mark,
	"control: the mark of 'jobs' fell back to $replicated_mark (it was $old_leader)");
cmp_ok(q2('SELECT last_value FROM fencing.epoch_seq'), '<', $old_seq,
	'control: the sequence went back');
is(q2('SELECT timeline FROM fencing.clock_timeline()'), '2',
	'the new primary is on timeline 2');

# --- Before any new term: the window fence_older_timelines() closes.  The
# leader of the surviving mark had been fenced on the old primary by the lost
# terms; on the new primary it is admitted (a control) until the marks of the
# 'issued' scopes are lifted to the floor of timeline 2.
q2("INSERT INTO jobs VALUES (20, $replicated_mark, 'fenced on the old primary, admitted here')");
pass("control: before the lift, the leader of the surviving mark ($replicated_mark) is admitted");
is(q2(q{SELECT string_agg(object, ',' ORDER BY object COLLATE "C") FROM fencing.health
		WHERE "check" = 'scope not fenced since the promotion'}),
	'jobs,leased,other', 'health lists the issued scopes not fenced since the promotion');
# A writer in flight at the surviving mark: the lift waits for it (its scope
# lock), and the write it committed before the lift stays (I3).
my $w = $new->background_psql('postgres');
$w->query_safe('BEGIN');
$w->query_safe("INSERT INTO jobs VALUES (22, $replicated_mark, 'in flight during the lift')");
my $f = $new->background_psql('postgres');
$f->query_until(qr/lifting/, "\\echo lifting\nSELECT fencing.fence_older_timelines(2);\n");
ok($new->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_locks WHERE NOT granted AND locktype = 'advisory'}),
	'fence_older_timelines() waits for the writer in flight at the surviving mark');
$w->query_safe('COMMIT');
$w->quit;
like($f->query_until(qr/lifted/, "\\echo lifted\n"), qr/^2$/m,
	'then fence_older_timelines(2) lifts two marks');
$f->quit;
is(q2('SELECT tok FROM jobs WHERE id = 22'), $replicated_mark,
	'the write committed before the lift stays');
is(q2('SELECT fencing.fence_older_timelines()'), '1', 'the next call lifts the last one');
# the lift claimed timeline 2's band: its floor, later than 2^40 by the time
# since the claim the standby replayed, no longer moves
my $floor = q2('SELECT term_floor FROM fencing.clock_timeline()');
cmp_ok($floor, '>', 1099511627776, "timeline 2's floor is above 2^40, by the time since the last claim ($floor)");
is(q2('SELECT term_floor FROM fencing.clock_timeline()'), $floor, 'and stays there once claimed');
is(q2('SELECT fencing.fence_older_timelines()'), '0', 'and then none');
is(q2("SELECT count(*) FROM fencing.scopes WHERE tokens = 'issued' AND mark <> $floor"), '0',
	"every issued scope's mark is the floor of timeline 2 ($floor)");
is(sqlstate_error($new, 'postgres', "INSERT INTO jobs VALUES (21, $replicated_mark, 'zombie')"),
	'ZF001', "after the lift the leader of the surviving mark ($replicated_mark) is rejected");
is(sqlstate_error($new, 'postgres', "INSERT INTO leased VALUES (5, $replicated, 'worker-a zombie')"),
	'ZF001', "so is the lease holder of the surviving lease (term $replicated)");
is(q2(q{SELECT count(*) FROM fencing.health WHERE "check" = 'scope not fenced since the promotion'}),
	'0', 'health: nothing left to fence');

# --- The new leaders take over on the new primary.
my $new_leader = take_on($new, 'jobs', 'new-leader');
cmp_ok($new_leader, '>', $old_max{jobs},
	"the new leader's term ($new_leader) is above every term the old primary returned ($old_max{jobs})");
take_on($new, 'jobs', "new-$_") for 1 .. 5;
take_on($new, 'other', "new-$_") for 1 .. 45;
take_on($new, 'fresh', "new-$_") for 1 .. 5;
is(take_on($new, 'edge', 'new-edge'), $floor,
	"on timeline 2 the edge scope's first term is the floor ($floor)");
$old_max{edge} //= 0;    # checked for duplicates below with the other scopes
for my $scope (sort keys %old_max)
{
	my %seen;
	my @dups = grep { $seen{$_}++ } @{ $issued{$scope} };
	is("@dups", '', "scope $scope: no term was handed out twice");
}
my @new_jobs = @{ $issued{jobs} }[ -6 .. -1 ];
is_deeply([ grep { $_ > $old_max{jobs} } @new_jobs ], \@new_jobs,
	"scope jobs: every term of the new primary is above the old primary's");
my @new_other = @{ $issued{other} }[ -45 .. -1 ];
is_deeply([ grep { $_ > $old_max{other} } @new_other ], \@new_other,
	'scope other: every term of the new primary is above the old primary\'s');

# Fenced writers stay fenced: the old primary's leader and the writer it
# had fenced, in the term scope ...
my $current = $issued{jobs}[-1];
q2("INSERT INTO jobs VALUES (10, $current, 'new leader writes')");
is(sqlstate_error($new, 'postgres', "INSERT INTO jobs VALUES (11, $old_leader, 'zombie')"),
	'ZF001', "the old primary's last leader ($old_leader) is rejected on the new primary");
is(sqlstate_error($new, 'postgres', "INSERT INTO jobs VALUES (12, $fenced_writer, 'zombie')"),
	'ZF001', "the writer the old primary had fenced ($fenced_writer) stays fenced");
is(sqlstate_error($new, 'postgres', "UPDATE jobs SET v = 'zombie', tok = $old_leader WHERE id = 1"),
	'ZF001', 'an UPDATE with the old leader\'s term is rejected too');

# ... and in a lease's scope: the lease taken on the old primary is lost;
# the next grant on the new primary fences both earlier holders.
my $g = q2("SELECT granted::int || ' ' || term FROM fencing.acquire_lease('leased', 'worker-c', '1 hour')");
my ($granted, $lease_term) = split / /, $g;
is($granted, '1', 'the lease (expired on the new primary) is granted to a new holder');
record_term('leased', $lease_term);
cmp_ok($lease_term, '>', $lost_lease,
	"its term ($lease_term) is above the lease term lost with the old primary ($lost_lease)");
is(sqlstate_error($new, 'postgres', "INSERT INTO leased VALUES (3, $lost_lease, 'worker-b zombie')"),
	'ZF001', "the holder of the lost lease (term $lost_lease) is rejected");
is(sqlstate_error($new, 'postgres', "INSERT INTO leased VALUES (4, $replicated, 'worker-a zombie')"),
	'ZF001', "the holder before it (term $replicated) is rejected");
my %seen;
my @dups = grep { $seen{$_}++ } @{ $issued{leased} };
is("@dups", '', 'scope leased: no term was handed out twice');

$new->stop;
done_testing();
