# 005_sync_failover.pl: a primary with a synchronous standby.
#
# Proves that
#   - a commit that issued a term or raised a mark waits for the synchronous
#     standby whatever the transaction did to synchronous_commit afterwards:
#     SET LOCAL synchronous_commit = off after fence_next_epoch(), after a
#     write that raised a mark, and a call through a function declared
#     SET synchronous_commit = off from a session that has it off; with the
#     standby stopped each of them waits (wait_event SyncRep) while an
#     ordinary commit with the same settings does not (control), and each
#     completes once the standby is back;
#   - terms, marks, leases and row tokens survive a crash of the primary
#     (immediate stop) and the promotion of the standby, unchanged;
#   - on the new primary the old leaders' writes are rejected (ZF001), the
#     current leader keeps writing, and the next term is above every term
#     issued before, on the new timeline's band (terms carry the timeline).
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

# application_name of the standby's WAL receiver is the node's name
$primary->append_conf('postgresql.conf', "synchronous_standby_names = 'standby'\n");
$primary->reload;
sub wait_sync
{
	$primary->poll_query_until('postgres',
		"SELECT EXISTS (SELECT 1 FROM pg_stat_replication WHERE application_name = 'standby' AND sync_state = 'sync')"
	) or die "standby did not become synchronous";
	return;
}
wait_sync();

sub q1 { return $primary->safe_psql('postgres', $_[0]); }

q1(q{
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
	SELECT fencing.create_scope('ext', tokens => 'external');
	SELECT fencing.create_scope('ext-takeover', tokens => 'external');
	CREATE TABLE ext (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('ext', 'tok', scope => 'ext');
	CREATE TABLE rows_only (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('rows_only', 'tok');
	CREATE TABLE plain (n int);
	CREATE FUNCTION take_async(s text) RETURNS bigint LANGUAGE sql
	    SET synchronous_commit = off
	    AS $$ SELECT fencing.fence_next_epoch(s) $$;
});

my %issued;    # every term handed out, by scope

# --- Durable commits that cannot be weakened: the standby is stopped.
$standby->stop('fast');
$primary->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_replication")
  or die "walsender did not go away";

# control: an ordinary commit with synchronous_commit off does not wait
q1('BEGIN; INSERT INTO plain VALUES (1); SET LOCAL synchronous_commit = off; COMMIT;');
is(q1('SELECT count(*) FROM plain'), '1',
	'control: an ordinary commit with synchronous_commit = off does not wait for the stopped standby');

my %waiting = (
	'SET LOCAL after fence_next_epoch' =>
	  "BEGIN;\nSELECT fencing.fence_next_epoch('w1');\nSET LOCAL synchronous_commit = off;\n\\echo ready\nCOMMIT;\n",
	'function declared SET synchronous_commit = off' =>
	  "SET synchronous_commit = off;\n\\echo ready\nSELECT take_async('w2');\n",
	'SET LOCAL after a write that raised a mark' =>
	  "BEGIN;\nINSERT INTO ext VALUES (1, 1000, 'raise');\nSET LOCAL synchronous_commit = off;\n\\echo ready\nCOMMIT;\n",
	'SET LOCAL after takeover()' =>
	  "BEGIN;\nSELECT fencing.takeover('ext-takeover', 700);\nSET LOCAL synchronous_commit = off;\n\\echo ready\nCOMMIT;\n",
);
my %session;
for my $case (sort keys %waiting)
{
	$session{$case} = $primary->background_psql('postgres');
	$session{$case}->query_until(qr/ready/, $waiting{$case});
}
ok( $primary->poll_query_until('postgres',
		"SELECT count(*) = 4 FROM pg_stat_activity WHERE wait_event = 'SyncRep'"),
	'all four commits wait for the synchronous standby (wait_event SyncRep)');
# still waiting a moment later, and nothing of them is visible yet
sleep 1;
is(q1("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'"),
	'4', 'they are still waiting');
is(q1("SELECT count(*) FROM fencing.terms WHERE scope IN ('w1', 'w2')"),
	'0', 'the waiting terms are not visible yet');
is(q1("SELECT count(*) FROM ext"), '0', 'the waiting raise is not visible yet');
is(q1("SELECT mark FROM fencing.scopes WHERE scope = 'ext-takeover'"),
	'0', 'the waiting takeover is not visible yet');

$standby->start;
wait_sync();
for my $case (sort keys %waiting)
{
	$session{$case}->query_safe('SELECT 1');    # returns once the commit is done
	$session{$case}->quit;
	pass("$case: the commit completed once the standby was back");
}
is(q1("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'"),
	'0', 'nobody waits any more');
$primary->wait_for_catchup($standby);
is( $standby->safe_psql('postgres',
		"SELECT string_agg(scope, ',' ORDER BY scope COLLATE \"C\") FROM fencing.terms WHERE scope IN ('w1', 'w2')"),
	'w1,w2', 'the standby has both terms');
is($standby->safe_psql('postgres', "SELECT mark FROM fencing.scopes WHERE scope = 'ext'"),
	'1000', 'the standby has the raised mark');
is($standby->safe_psql('postgres', "SELECT mark FROM fencing.scopes WHERE scope = 'ext-takeover'"),
	'700', 'the standby has the mark takeover() raised');
$issued{w1} = [ q1("SELECT epoch FROM fencing.terms WHERE scope = 'w1'") ];
$issued{w2} = [ q1("SELECT epoch FROM fencing.terms WHERE scope = 'w2'") ];

# --- State to carry across the failover.
sub take
{
	my ($scope, $holder, $sync) = @_;
	my $e = q1("SET synchronous_commit = $sync; SELECT fencing.fence_next_epoch('$scope', '$holder')");
	push @{ $issued{$scope} }, $e;
	return $e;
}
my $e1 = take('jobs', 'leader-1', 'on');
q1("INSERT INTO jobs VALUES (1, $e1, 'by leader-1')");
my $e2 = take('jobs', 'leader-2', 'off');    # fences leader-1
q1("INSERT INTO jobs VALUES (2, $e2, 'by leader-2')");
take('many', "h$_", $_ % 2 ? 'off' : 'local') for 1 .. 40;
q1("INSERT INTO rows_only VALUES (1, 5, 'r')");
q1("SET synchronous_commit = off; UPDATE rows_only SET tok = 10, v = 'raised' WHERE id = 1");
q1("SET synchronous_commit = off; INSERT INTO ext VALUES (2, 1500, 'raise again')");
my $lease = q1(
	"SET synchronous_commit = off; SELECT term FROM fencing.acquire_lease('leased', 'holder-a', '1 hour')"
);
push @{ $issued{leased} }, $lease;

my %state = (
	scopes => 'SELECT scope, mark, epoch, holder, terms_issued, tokens FROM fencing.scopes ORDER BY scope COLLATE "C"',
	terms  => 'SELECT scope, epoch, holder FROM fencing.terms ORDER BY scope COLLATE "C", epoch',
	leases => 'SELECT scope, holder, term, expires_at FROM fencing.leases ORDER BY scope COLLATE "C"',
	rows   => 'SELECT * FROM jobs ORDER BY id; SELECT * FROM ext ORDER BY id; SELECT * FROM rows_only',
);
my %before = map { $_ => q1($state{$_}) } keys %state;
my $max_before = q1('SELECT max(epoch) FROM fencing.terms');

# --- Crash the primary, promote the standby (no catch-up wait: the
# synchronous commits are what must have reached it).
$primary->stop('immediate');
$standby->promote;
my $new = $standby;
sub q2 { return $new->safe_psql('postgres', $_[0]); }

for my $what (sort keys %state)
{
	is(q2($state{$what}), $before{$what}, "after failover: $what unchanged");
}
is(q2("SELECT holder || ' ' || term FROM fencing.lease_status WHERE scope = 'leased' AND live"),
	"holder-a $lease", 'the lease is still live with its term');
is(q2('SELECT timeline FROM fencing.clock_timeline()'), '2',
	'the new primary is on timeline 2');

# The old leader is rejected, the current one still writes.
is(sqlstate_error($new, 'postgres', "INSERT INTO jobs VALUES (3, $e1, 'zombie')"),
	'ZF001', "the fenced leader's write (term $e1) is rejected on the new primary");
is(sqlstate_error($new, 'postgres', "UPDATE ext SET v = 'zombie', tok = 1200 WHERE id = 1"),
	'ZF001', 'a lower external token is rejected on the new primary');
is(sqlstate_error($new, 'postgres', "UPDATE rows_only SET tok = 7, v = 'zombie' WHERE id = 1"),
	'ZF001', "a token below the row's raised token is rejected on the new primary");
q2("INSERT INTO jobs VALUES (4, $e2, 'leader-2 goes on')");
is(q2('SELECT count(*) FROM jobs WHERE id = 4'), '1',
	'the current leader keeps writing with its term');

# The next term is above every term issued before, in the new band.
my $e3 = q2("SELECT fencing.fence_next_epoch('jobs', 'leader-3')");
cmp_ok($e3, '>', $max_before,
	"the next term ($e3) is above every term issued before ($max_before)");
cmp_ok($e3, '>=', 2**40, 'it is in the band of timeline 2 (at least 2^40)');
is(sqlstate_error($new, 'postgres', "INSERT INTO jobs VALUES (5, $e2, 'now fenced')"),
	'ZF001', 'the new term fences the previous leader on the new primary');
my $dup = 0;
for my $scope (keys %issued)
{
	my %in = map { $_ => 1 } @{ $issued{$scope} };
	$dup += scalar(@{ $issued{$scope} }) - scalar(keys %in);
}
is($dup, 0, 'no term was handed out twice');

$new->stop;
done_testing();
