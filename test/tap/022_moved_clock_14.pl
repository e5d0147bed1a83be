# 022_moved_clock_14.pl: a 1.4 install moved to another cluster and updated
# there has terms but no claim of the clock; no term is issued twice when it
# moves again, also from a copy made before its first term.
#
# History, PostgreSQL 15 to 15, the extension at 1.4 SQL in the source:
#   A (1.4, timeline 1) issues; its standby B is promoted (timeline 2) and
#   issues in timeline 2's band; B is upgraded with pg_upgrade (copy) into N
#   (timeline 1, 1.4 SQL), updated to 1.5 before its first term: terms above
#   its timeline's band, so no claim (the clock is "unclaimed").  N gets a
#   streaming standby S (hot standby), cut off before N's first term; N
#   issues (its first term moves the clock).  S is dumped (pg_dump -Fd on
#   the hot standby) and restored into a new cluster G after N's terms: G's
#   terms are above N's (both moved from the same data; before, with no
#   claim to count the time from, both claimed the same band and G issued
#   N's terms again).  The same dump restored (-Ft) into a second database
#   of G later still: above G's first database.  S promoted (timeline 2):
#   above N's terms.  G's standby H, preloaded with fencing.clock_promotion
#   = 'confirm', promoted after missing G's last terms: no term (ZF006) until
#   confirm_clock(), then above every term.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use List::Util qw(max);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $band = 2**40;
my @issued;
my $max_issued = 0;

sub issue
{
	my ($node, $db, $scope, $holder) = @_;
	my $t = $node->safe_psql($db,
		"SET synchronous_commit = off; SELECT fencing.fence_next_epoch('$scope', '$holder')");
	push @issued, "$t ($scope on " . $node->name . "/$db)";
	$max_issued = $t if $t > $max_issued;
	return $t;
}

my $bindir = PostgreSQL::Test::Cluster->new('probe')->config_data('--bindir');

# --- A at 1.4, timeline 1; its standby B promoted to timeline 2.
my $a = PostgreSQL::Test::Cluster->new('a');
$a->init(allows_streaming => 1);
$a->append_conf('postgresql.conf', "autovacuum = off\n");
$a->start;
$a->safe_psql('postgres', "CREATE EXTENSION fencing VERSION '1.4'");
issue($a, 'postgres', 'jobs', "a-$_") for 1 .. 3;
issue($a, 'postgres', 'other', 'a-1');
my $b = streaming_standby($a, 'b');
$a->stop('immediate');
$b->promote;
my $b_term = issue($b, 'postgres', 'jobs', 'b-1');
cmp_ok($b_term, '>=', $band, "B's 1.4 term ($b_term) is in timeline 2's band");
issue($b, 'postgres', 'other', 'b-1');
$b->stop;

# --- pg_upgrade (copy) of B into N, then ALTER EXTENSION UPDATE.
my $n = PostgreSQL::Test::Cluster->new('n');
$n->init(allows_streaming => 1);
$n->append_conf('postgresql.conf', "autovacuum = off\n");
{
	my $cwd = PostgreSQL::Test::Utils::tempdir;
	chdir $cwd;
	command_ok(
		[
			"$bindir/pg_upgrade", '--no-sync',
			'-d', $b->data_dir, '-D', $n->data_dir,
			'-b', $bindir, '-B', $bindir,
			'-s', $n->host, '-p', $b->port, '-P', $n->port
		],
		'pg_upgrade (copy) of B into N');
}
$n->start;
is($n->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'fencing'"),
	'1.4', 'N has the 1.4 install');
$n->safe_psql('postgres', 'ALTER EXTENSION fencing UPDATE');
is($n->safe_psql('postgres', 'SELECT count(*) FROM fencing.clock'), '0',
	"N's clock has no claim: terms above its timeline's band show it was moved");
is($n->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'unclaimed',
	"N's clock is unclaimed");

# S: a hot standby of N that lags N's first term
my $s = streaming_standby($n, 's');
cut_off($s);
my @n_terms;
push @n_terms, issue($n, 'postgres', 'jobs', "n-$_") for 1 .. 3;
push @n_terms, issue($n, 'postgres', 'other', 'n-1');
push @n_terms, issue($n, 'postgres', 'fresh', 'n-1');
cmp_ok($n_terms[0], '>', $b_term, "N's first term ($n_terms[0]) is above B's ($b_term)");
is($s->safe_psql('postgres', 'SELECT count(*) FROM fencing.clock'), '0',
	"control: S missed N's claim");

# --- pg_dump -Fd of the hot standby S, restored into G after N's terms.
my $dir = PostgreSQL::Test::Utils::tempdir . '/s.dir';
command_ok([ "$bindir/pg_dump", '-Fd', '-f', $dir, '-d', $s->connstr('postgres') ],
	'pg_dump -Fd of S, a hot standby that missed N\'s first term');
my $tar = PostgreSQL::Test::Utils::tempdir . '/s.tar';
command_ok([ "$bindir/pg_dump", '-Ft', '-f', $tar, '-d', $s->connstr('postgres') ],
	'pg_dump -Ft of S');

my $g = PostgreSQL::Test::Cluster->new('g');
$g->init(allows_streaming => 1);
$g->append_conf('postgresql.conf', "autovacuum = off\nshared_preload_libraries = 'fencing'\n");
$g->start;
command_ok([ "$bindir/pg_restore", '--exit-on-error', '-d', $g->connstr('postgres'), $dir ],
	'pg_restore -Fd of S into G');
is($g->safe_psql('postgres', 'SELECT count(*) FROM fencing.clock'), '0',
	"control: G's restored clock has no claim either");
my $highest_n = max(@n_terms);
my @g_terms;
for my $scope ('jobs', 'other', 'fresh')
{
	my $t = issue($g, 'postgres', $scope, 'g');
	push @g_terms, $t;
	cmp_ok($t, '>', $highest_n,
		"G: the next term of '$scope' ($t) is above every term N issued after the dump ($highest_n)");
}

# H: G's standby, preloaded, fencing.clock_promotion = 'confirm'
my $h = streaming_standby($g, 'h', "fencing.clock_promotion = 'confirm'");
cut_off($h);
push @g_terms, issue($g, 'postgres', 'jobs', "g-lost-$_") for 1 .. 3;

# --- the tar dump restored into a second database of G, later still
$g->safe_psql('postgres', 'CREATE DATABASE second');
command_ok([ "$bindir/pg_restore", '--exit-on-error', '-d', $g->connstr('second'), $tar ],
	"pg_restore -Ft of S into G's database second");
{
	my $highest = max(@n_terms, @g_terms);
	my $t = issue($g, 'second', 'jobs', 'second');
	cmp_ok($t, '>', $highest,
		"G/second: the next term of 'jobs' ($t) is above N's and G's ($highest)");
}
$g->stop('immediate');

# --- S promoted: above N's terms
$n->stop('immediate');
$s->promote;
{
	my $t = issue($s, 'postgres', 'jobs', 's');
	cmp_ok($t, '>', $highest_n, "S promoted: the next term of 'jobs' ($t) is above N's ($highest_n)");
}

# --- H promoted with clock_promotion = 'confirm': no term until confirmed
$h->promote;
is(sqlstate_error($h, 'postgres', "SELECT fencing.fence_next_epoch('jobs', 'h')"),
	'ZF006', 'H refuses terms after its promotion until the clock is confirmed');
is(sqlstate_error($h, 'postgres', "SELECT fencing.acquire_lease('jobs', 'h', '1 minute')"),
	'ZF006', 'and lease grants');
$h->safe_psql('postgres', 'SELECT fencing.confirm_clock()');
{
	my $highest = max(@g_terms);
	my $t = issue($h, 'postgres', 'jobs', 'h');
	cmp_ok($t, '>', $highest, "H confirmed: the next term of 'jobs' ($t) is above G's ($highest)");
}

my %seen;
my @twice = grep { my ($t, $sc) = /^(\d+) \((\S+)/; $seen{"$sc $t"}++ } @issued;
is(scalar(@twice), 0, 'no term was issued twice in any scope') or diag(join("\n", @twice));

$s->stop;
$h->stop;
done_testing();
