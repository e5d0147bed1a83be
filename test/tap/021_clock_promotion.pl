# 021_clock_promotion.pl: two standbys of one primary, promoted one after the
# other without a shared WAL archive, land on the same timeline: Postgres
# picks timeline + 1 from the history each one sees, and the second never
# saw the first's.  The band of terms (timeline and generation) is then the
# same; no data on the second server tells.  A promotion's band is later
# by the time since the claim in force, so the second issues above every
# term the first issued (before 1.5's promotion shift it issued them
# again).  fencing.clock_promotion = 'confirm' makes a promoted server
# refuse terms until a superuser confirms the clock.
#
# Proves, fencing preloaded, primary A with standbys B, C and D (no archive):
#   - B, promoted (timeline 2), issues terms; then B is lost;
#   - D, promoted with the default fencing.clock_promotion = 'issue', also
#     lands on timeline 2, and issues above every term B issued, in every
#     scope;
#   - C, promoted with 'confirm', lands on timeline 2 too, refuses every term
#     and lease grant (ZF006) and says so (clock_state, fencing.health:
#     critical) until a superuser calls fencing.confirm_clock(); then every
#     term it issues is above every term B issued;
#   - a clean restart keeps the confirmation; the default ('issue') asks for
#     nothing after a promotion (B).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = "shared_preload_libraries = 'fencing'\nautovacuum = off\n";

sub timeline
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT timeline FROM fencing.clock_timeline()');
}

my $a = PostgreSQL::Test::Cluster->new('a');
$a->init(allows_streaming => 1);
$a->append_conf('postgresql.conf', $conf);
$a->start;
$a->safe_psql('postgres', 'CREATE EXTENSION fencing');
term($a, 'jobs') for 1 .. 3;
$a->backup('bk');

my %standby;
for my $name (qw(b c d))
{
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($a, 'bk', has_streaming => 1);
	$node->start;
	$standby{$name} = $node;
}
my $a_last = term($a, 'jobs');
$a->wait_for_catchup($standby{$_}) for qw(b c d);
$a->stop('immediate');

# B is promoted, issues, and is lost
my $b = $standby{b};
$b->promote;
is(timeline($b), '2', 'B is promoted onto timeline 2');
is($b->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'new timeline',
	"by default ('issue') a promoted server issues at once");
my @b_terms = map { term($b, 'jobs') } 1 .. 5;
cmp_ok($b_terms[0], '>', $a_last, "B's terms are above A's ($b_terms[0])");
my $b_other = term($b, 'other');
$b->stop('immediate');

# D, promoted with 'issue' onto the same timeline, issues above B
my $d = $standby{d};
$d->promote;
is(timeline($d), '2', 'D, which never saw B\'s history, is promoted onto timeline 2 too');
my $d_term = term($d, 'jobs');
cmp_ok($d_term, '>', $b_terms[-1],
	"with 'issue', D's first term ($d_term) is above every term B issued ($b_terms[-1])");
cmp_ok(term($d, 'other'), '>', $b_other, 'in every scope');
$d->stop;

# C, promoted with 'confirm'
my $c = $standby{c};
$c->append_conf('postgresql.conf', "fencing.clock_promotion = 'confirm'\n");
$c->reload;
$c->promote;
is(timeline($c), '2', 'C is promoted onto timeline 2 too');
is($c->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'),
	'awaits confirmation since a promotion', 'with clock_promotion = confirm, C awaits confirmation');
is(sqlstate_error($c, 'postgres', "SELECT fencing.fence_next_epoch('jobs')"),
	'ZF006', 'and refuses to issue a term (ZF006)');
is(sqlstate_error($c, 'postgres', "SELECT fencing.acquire_lease('other', 'w', '1 minute')"),
	'ZF006', 'and a lease');
is($c->safe_psql('postgres',
		q{SELECT severity FROM fencing.health WHERE "check" = 'clock not confirmed since a promotion'}),
	'critical', 'fencing.health says so (critical)');
my $floor = $c->safe_psql('postgres', 'SELECT fencing.confirm_clock()');
my $c_term = term($c, 'jobs');
cmp_ok($c_term, '>', $b_terms[-1],
	"once confirmed, C's next term ($c_term) is above every term B issued");
cmp_ok(term($c, 'other'), '>', $b_other, 'in every scope');
is($c->safe_psql('postgres',
		q{SELECT count(*) FROM fencing.health WHERE "check" = 'clock not confirmed since a promotion'}),
	'0', 'health has no finding once confirmed');

$c->restart;
is($c->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'claimed',
	'a clean restart (no longer a standby) asks for nothing');
cmp_ok(term($c, 'jobs'), '>', $c_term, 'and issues on');
$c->stop;
done_testing();
