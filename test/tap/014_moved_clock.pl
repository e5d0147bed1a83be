# 014_moved_clock.pl: no term is issued twice when the database moves to
# another cluster (pg_upgrade, pg_dump/pg_restore) and fails over there.
#
# A new cluster starts on timeline 1 with the terms copied, so banding terms
# by timeline alone lets its promoted standby (timeline 2) issue again the
# terms its primary issued.  History, PostgreSQL 15 to 15:
#   A (timeline 1) issues; its standby B is promoted (timeline 2) and issues;
#   B is upgraded with pg_upgrade (copy mode) into C (timeline 1, a new
#   system identifier); C gets a streaming standby D; C issues (the clock
#   claim reaches D), D stops receiving, C issues more; C is lost, D is
#   promoted (timeline 2): D's next terms are above every term ever issued.
#   pg_upgrade --link of B into C2: C2's first term is above every term.
#   D is dumped (pg_dump -Fc) and restored into a new cluster E; E gets a
#   standby F, which stops receiving before E's first term (F never sees
#   E's claim); E issues; E is lost, F is promoted: F's next terms are above
#   every term ever issued (F claims the same generation E did, on a higher
#   timeline).  A plain dump of F restored with psql into a new database of
#   F: its first term is above every term too (another database).
#   Dumps taken before their source moved on: a dump of A taken before its
#   failover, and a dump of C's standby D2, cut off before C claimed the
#   clock (a hot standby lagging its primary's move), both restored into a
#   new cluster G after those terms were issued: G's first terms are above
#   B's (a margin of 16 timelines) and above C's (later by the time since
#   the claim they all moved from).
# Each promoted server also fences the old terms (fence_older_timelines()
# lifts the marks to the floor of its band).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use File::Path qw(rmtree);
use List::Util qw(max);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $band = 2**40;
my @issued;    # every term any server returned, with where
my $max_issued = 0;

sub issue
{
	my ($node, $scope, $holder) = @_;
	my $t = $node->safe_psql('postgres',
		"SET synchronous_commit = off; SELECT fencing.fence_next_epoch('$scope', '$holder')");
	push @issued, "$t ($scope on " . $node->name . ")";
	$max_issued = $t if $t > $max_issued;
	return $t;
}

# The terms a promoted server issues: above every term ever issued, in the
# scopes that took terms before and in a new one.
sub check_next_terms
{
	my ($node, $what) = @_;
	my $before = $max_issued;
	for my $scope ('jobs', 'other', "fresh-" . $node->name)
	{
		my $t = issue($node, $scope, "leader-" . $node->name);
		cmp_ok($t, '>', $before,
			"$what: the next term of '$scope' ($t) is above every term ever issued ($before)");
	}
	return;
}

my $bindir = PostgreSQL::Test::Cluster->new('probe')->config_data('--bindir');

# --- A, timeline 1, and its standby B promoted to timeline 2.
my $a = PostgreSQL::Test::Cluster->new('a');
$a->init(allows_streaming => 1);
$a->append_conf('postgresql.conf', "autovacuum = off\n");
$a->start;
$a->safe_psql('postgres', q{
	CREATE EXTENSION fencing;
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
});
issue($a, 'jobs', "a-$_") for 1 .. 3;
issue($a, 'other', 'a-1');
# a dump of A before its source moves on: restored at the end
my $a_dump = PostgreSQL::Test::Utils::tempdir . '/a.dump';
command_ok([ "$bindir/pg_dump", '-Fc', '-f', $a_dump, '-d', $a->connstr('postgres') ],
	'pg_dump of A on timeline 1');
my @b_terms;
my $b = streaming_standby($a, 'b');
$a->stop('immediate');
$b->promote;
is($b->safe_psql('postgres', 'SELECT timeline FROM fencing.clock_timeline()'), '2',
	'B is on timeline 2');
my $b_term = issue($b, 'jobs', 'b-1');
cmp_ok($b_term, '>=', $band, "B's term ($b_term) is in timeline 2's band");
push @b_terms, $b_term, issue($b, 'other', 'b-1');
$b->safe_psql('postgres', "INSERT INTO jobs VALUES (1, $b_term, 'B leader')");
my $b_sysid = $b->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
$b->stop;

# --- pg_upgrade (copy) of B into C: timeline 1, a new system identifier.
my $c = PostgreSQL::Test::Cluster->new('c');
$c->init(allows_streaming => 1);
$c->append_conf('postgresql.conf', "autovacuum = off\n");
{
	my $cwd = PostgreSQL::Test::Utils::tempdir;
	chdir $cwd;
	command_ok(
		[
			"$bindir/pg_upgrade", '--no-sync',
			'-d', $b->data_dir, '-D', $c->data_dir,
			'-b', $bindir, '-B', $bindir,
			'-s', $c->host, '-p', $b->port, '-P', $c->port
		],
		'pg_upgrade (copy) of B into C');
}
$c->start;
is($c->safe_psql('postgres', 'SELECT timeline FROM fencing.clock_timeline()'), '1',
	'C is on timeline 1');
isnt($c->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()'),
	$b_sysid,
	'C has a new system identifier');
is($c->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'moves',
	"C's clock was claimed by another server: the next term moves it");
is(sqlstate_error($c, 'postgres', "INSERT INTO jobs VALUES (2, " . ($b_term - 1) . ", 'stale')"),
	'ZF001', 'on C a token below the mark is refused at once');

my $d = streaming_standby($c, 'd');
# D2 lags C's move: cut off before C's first term claims the clock
my $d2 = streaming_standby($c, 'd2');
cut_off($d2);
my $c_first = issue($c, 'jobs', 'c-1');
my @c_terms = ($c_first);
cmp_ok($c_first, '>', $max_issued - 1, "C's first term ($c_first) is above every term before it");
is($c->safe_psql('postgres', 'SELECT state || reason FROM fencing.clock_state()'),
	'claimednew system identifier', "C claimed the clock: it has a new system identifier");
$c->wait_for_catchup($d);
cut_off($d);
my $c_last;
push @c_terms, $c_last = issue($c, 'jobs', "c-lost-$_") for 1 .. 40;
push @c_terms, issue($c, 'other', "c-lost-$_") for 1 .. 3;
push @c_terms, issue($c, 'fresh-d', 'c-lost');
$c->stop('immediate');
$d->promote;
is($d->safe_psql('postgres', 'SELECT timeline FROM fencing.clock_timeline()'), '2',
	'D is on timeline 2');
cmp_ok($d->safe_psql('postgres', "SELECT mark FROM fencing.scopes WHERE scope = 'jobs'"),
	'<', $max_issued, "control: D lost C's last terms");
is($d->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'new timeline',
	'D sees the clock C claimed, on a higher timeline');
my $d_floor = $d->safe_psql('postgres', 'SELECT term_floor FROM fencing.clock_timeline()');
cmp_ok($d_floor, '>', $max_issued, "D's band starts above every term issued ($d_floor)");
ok($d->safe_psql('postgres', 'SELECT fencing.fence_older_timelines() > 0'),
	'fence_older_timelines() lifts the marks on D');
is(sqlstate_error($d, 'postgres', "INSERT INTO jobs VALUES (3, $c_last, 'C leader, lost')"),
	'ZF001', "on D the holder of C's lost last term ($c_last) is fenced");
check_next_terms($d, 'pg_upgrade, then D promoted');

# --- pg_upgrade --link of B into C2.
my $c2 = PostgreSQL::Test::Cluster->new('c2');
$c2->init;
{
	my $cwd = PostgreSQL::Test::Utils::tempdir;
	chdir $cwd;
	command_ok(
		[
			"$bindir/pg_upgrade", '--no-sync', '--link',
			'-d', $b->data_dir, '-D', $c2->data_dir,
			'-b', $bindir, '-B', $bindir,
			'-s', $c2->host, '-p', $b->port, '-P', $c2->port
		],
		'pg_upgrade --link of B into C2');
}
$c2->start;
{
	my $t = $c2->safe_psql('postgres', "SELECT fencing.fence_next_epoch('jobs', 'c2')");
	cmp_ok($t, '>=', 2 * $band,
		"C2's first term ($t) is above the band B used on timeline 2 and the band a standby of C2 promoted to timeline 2 would use without the generation");
}
$c2->stop;

# --- pg_dump/pg_restore of D into a new cluster E, its standby F cut off
# before E's first term.
my $dump = PostgreSQL::Test::Utils::tempdir . '/d.dump';
command_ok([ "$bindir/pg_dump", '-Fc', '-f', $dump, '-d', $d->connstr('postgres') ],
	'pg_dump of D');
my $e = PostgreSQL::Test::Cluster->new('e');
$e->init(allows_streaming => 1);
$e->append_conf('postgresql.conf', "autovacuum = off\n");
$e->start;
command_ok(
	[ "$bindir/pg_restore", '--exit-on-error', '-d', $e->connstr('postgres'), $dump ],
	'pg_restore into E');
is($e->safe_psql('postgres', "SELECT mark FROM fencing.scopes WHERE scope = 'jobs'"),
	$d->safe_psql('postgres', "SELECT mark FROM fencing.scopes WHERE scope = 'jobs'"),
	'the mark is restored');
is($e->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'moves',
	"E's clock was claimed by another server");
my $f = streaming_standby($e, 'f');
cut_off($f);
issue($e, 'jobs', "e-lost-$_") for 1 .. 5;
issue($e, 'other', 'e-lost');
issue($e, 'fresh-f', 'e-lost');
$e->stop('immediate');
$f->promote;
is($f->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'moves',
	'F never saw the claim of E');
check_next_terms($f, 'pg_restore, then F promoted');

# --- A plain dump of F restored with psql (ON_ERROR_STOP) into a new
# database of the same cluster: another database, the generation moves.
my $plain = PostgreSQL::Test::Utils::tempdir . '/f.sql';
command_ok([ "$bindir/pg_dump", '-Fp', '-f', $plain, '-d', $f->connstr('postgres') ],
	'plain pg_dump of F');
$f->safe_psql('postgres', 'CREATE DATABASE restored');
command_ok(
	[ "$bindir/psql", '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $plain, '-d', $f->connstr('restored') ],
	'the plain dump restores into a new database of F');
{
	my $before = $max_issued;
	my $t = $f->safe_psql('restored', "SELECT fencing.fence_next_epoch('jobs', 'restored')");
	push @issued, "$t (jobs on f/restored)";
	cmp_ok($t, '>', $before,
		"in the restored database the next term of 'jobs' ($t) is above every term ever issued ($before)");
	is($f->safe_psql('restored', 'SELECT reason FROM fencing.clock_state()'), 'new database',
		'the restored database moved the clock: it is another database');
}

# --- Dumps taken before their source moved on, restored into a new
# cluster G once the source had issued more: A's, from before B's promotion,
# and D2's, from before C's move (pg_dump on a hot standby).
my $d2_dump = PostgreSQL::Test::Utils::tempdir . '/d2.dump';
command_ok([ "$bindir/pg_dump", '-Fc', '-f', $d2_dump, '-d', $d2->connstr('postgres') ],
	"pg_dump of D2, a hot standby that missed C's move");
is($d2->safe_psql('postgres', 'SELECT claimed_timeline FROM fencing.clock_state()'), '2',
	"control: D2's clock is B's claim, the one C moved from");
$d2->stop;
my $g = PostgreSQL::Test::Cluster->new('g');
$g->init;
$g->append_conf('postgresql.conf', "autovacuum = off
");
$g->start;
for my $case ([ 'from_a', $a_dump, \@b_terms, "B's terms on timeline 2, issued after A's dump" ],
	[ 'from_d2', $d2_dump, \@c_terms, "C's terms, issued after its own move from the same claim" ])
{
	my ($db, $file, $later, $what) = @$case;
	$g->safe_psql('postgres', "CREATE DATABASE $db");
	command_ok([ "$bindir/pg_restore", '--exit-on-error', '-d', $g->connstr($db), $file ],
		"pg_restore of the dump into G's database $db");
	my $highest = max(@$later);
	for my $scope ('jobs', 'other')
	{
		my $t = $g->safe_psql($db, "SELECT fencing.fence_next_epoch('$scope', '$db')");
		push @issued, "$t ($scope on g/$db)";
		cmp_ok($t, '>', $highest, "$db: the next term of '$scope' ($t) is above $what ($highest)");
	}
}
$g->stop;

# Every term once: no two returned values are equal per scope.
my %seen;
my @twice = grep { my ($t, $s) = /^(\d+) \((\S+)/; $seen{"$s $t"}++ } @issued;
is(scalar(@twice), 0, 'no term was issued twice in any scope') or diag(join("\n", @twice));

$d->stop;
$f->stop;
done_testing();
