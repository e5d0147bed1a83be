# 024_promotion_shift.pl: a promotion's band is later than the claim in
# force by the time from that claim to the promotion (when the promotion
# wrote its timeline's history file), not to the promoted server's first
# term.
#
# A promoted server claims its band at its first term, which may come long
# after its promotion.  Measured to that first term, its band went on rising
# with the time: a server promoted onto timeline 2 that issued nothing yet,
# whose cascading standby was promoted meanwhile onto timeline 3 and issued
# first (a split brain: the failover manager lost sight of the first one),
# then claimed a band whose limit lay above timeline 3's floor, and issued
# timeline 3's terms again (a scope at its band's edge, which ZF007 is there
# to stop) - above the newer timeline's, which fences nothing then.
#
# Proves, primary A, its standby B, B's cascading standby C, A's standby D:
#   - B promoted (timeline 2), idle; C follows it, then is promoted
#     (timeline 3) and issues; B's first term comes after C's: B's band
#     (its term_limit) is below C's first term, its claim is dated at its
#     promotion, and a scope of B pushed just under C's first term gets no
#     term (ZF007) rather than C's term again (before: B issued it);
#   - B's band is above every term A's claim band holds (the shift only adds);
#   - D, promoted onto timeline 2 after B, its promotion's WAL recycled
#     before its first term, issues above every term B issued, without
#     error, its claim dated at its promotion all the same (the time its
#     timeline's history file was written);
#   - D, moved by pg_dump/pg_restore into a new cluster F (A's claim made
#     100 days before, so the promotions' shifts span bands): F's first term
#     is above every band B, C and D used, and G, F's standby cut off and
#     promoted, above F's terms;
#   - E, a point-in-time recovery of A (recovery_target_lsn, promote: an
#     end-of-recovery checkpoint, not record, begins its timeline), issues
#     above A's band, its claim dated at the end of its recovery; two first
#     terms at once (one left open) claim the same band, neither waits.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $conf = "autovacuum = off\n";

sub band
{
	my ($node) = @_;
	return split /\|/,
	  $node->safe_psql('postgres', 'SELECT timeline, term_floor, term_limit FROM fencing.clock_timeline()');
}

my $a = PostgreSQL::Test::Cluster->new('a');
$a->init(allows_streaming => 1);
$a->append_conf('postgresql.conf', $conf);
$a->start;
$a->safe_psql('postgres', 'CREATE EXTENSION fencing');
term($a, 'jobs') for 1 .. 3;
# A's claim made 100 days ago: a promotion's shift then spans bands (7.9)
$a->safe_psql('postgres', q{UPDATE fencing.clock SET claimed_at = claimed_at - interval '100 days'});
my (undef, $a_floor, $a_limit) = band($a);
$a->backup('bk');

my $b = PostgreSQL::Test::Cluster->new('b');
$b->init_from_backup($a, 'bk', has_streaming => 1);
$b->append_conf('postgresql.conf', $conf);
$b->start;
my $d = PostgreSQL::Test::Cluster->new('d');
$d->init_from_backup($a, 'bk', has_streaming => 1);
$d->append_conf('postgresql.conf', $conf . "wal_keep_size = 0\nmin_wal_size = 32MB\nmax_wal_size = 32MB\n");
$d->start;
$a->wait_for_catchup($_) for ($b, $d);

# C: B's cascading standby, following B onto its new timeline
$b->backup('bkb');
my $c = PostgreSQL::Test::Cluster->new('c');
$c->init_from_backup($b, 'bkb', has_streaming => 1);
$c->append_conf('postgresql.conf', $conf);
$c->start;
# E: a point-in-time recovery of A, ending (promote) at an LSN before A's
# last term: the end-of-recovery checkpoint begins its timeline
my $target = $a->safe_psql('postgres', 'SELECT pg_catalog.pg_current_wal_lsn()');
my $a_last = term($a, 'jobs');
my $e = PostgreSQL::Test::Cluster->new('e');
$e->init_from_backup($a, 'bk', has_streaming => 1);
$e->append_conf('postgresql.conf',
	$conf . "recovery_target_lsn = '$target'\nrecovery_target_action = 'promote'\n");
$e->start;
ok($e->poll_query_until('postgres', 'SELECT NOT pg_catalog.pg_is_in_recovery()'),
	'E, a point-in-time recovery of A, ends its recovery at the target');
my $e_ended = $e->safe_psql('postgres', 'SELECT pg_catalog.clock_timestamp()');
$a->wait_for_catchup($b);
$b->wait_for_catchup($c, 'replay', $b->lsn('replay'));
$a->stop('immediate');

# B promoted, idle; C follows it onto timeline 2, then is promoted too
$b->promote;
is(($b->safe_psql('postgres', 'SELECT timeline FROM fencing.clock_timeline()')), '2',
	'B is promoted onto timeline 2');
ok($c->poll_query_until('postgres', 'SELECT timeline = 2 FROM fencing.clock_timeline()'),
	"C, B's cascading standby, follows it onto timeline 2");
usleep(300_000);
$c->promote;
is(($c->safe_psql('postgres', 'SELECT timeline FROM fencing.clock_timeline()')), '3',
	'C is promoted onto timeline 3 while B lives on (a split brain)');
my $c_first = term($c, 'jobs');
my (undef, $c_floor, $c_limit) = band($c);
is($c_first, $c_floor, "C's first term is its floor ($c_floor)");

# B's first term comes seconds after C's
sleep 2;
my $b_first = term($b, 'jobs');
my (undef, $b_floor, $b_limit) = band($b);
cmp_ok($b_floor, '>=', $a_limit, "B's floor ($b_floor) is above the limit of A's band ($a_limit)");
cmp_ok($b_first, '>', $a_last, "B's first term is above A's last");
cmp_ok($b_limit, '<=', $c_first,
	"B's band, claimed after C's first term, lies below it: term_limit $b_limit <= $c_first");
is($b->safe_psql('postgres',
		q{SELECT claimed_at < pg_catalog.now() - interval '1 second' FROM fencing.clock WHERE timeline = 2}),
	't', "B's claim is dated at its promotion, not at its first term");
is($b->safe_psql('postgres',
		q{SELECT claimed_at <> pg_catalog.date_trunc('second', claimed_at) FROM fencing.clock WHERE timeline = 2}),
	't', 'to the microsecond: by its timeline history file');
is($b->safe_psql('postgres', 'SELECT term_limit FROM fencing.clock_timeline()'), $b_limit,
	'and its band no longer moves');

# a scope of B pushed to just below C's first term: refused, not issued again
my $push = $c_first - 1;
$b->safe_psql('postgres', "SELECT fencing.reset_mark('jobs', $push)");
my $err = sqlstate_error($b, 'postgres', "SELECT fencing.fence_next_epoch('jobs', 'stale')");
is($err, 'ZF007',
	"B refuses the term after $push (ZF007) rather than issue C's first term ($c_first) again");
$b->safe_psql('postgres', 'SELECT fencing.reset_mark(\'jobs\', ' . ($b_limit - 2) . ')');
my $b_edge = term($b, 'jobs');
cmp_ok($b_edge, '<', $c_first, "B's last term of its band ($b_edge) is below C's first");
is(sqlstate_error($b, 'postgres', "SELECT fencing.fence_next_epoch('jobs', 'stale')"), 'ZF007',
	'and then it refuses');
my $b_max = $b_edge;
$b->stop('immediate');
$c->stop;

# D: promoted onto timeline 2 too (it never saw B's history), its
# promotion's WAL recycled before its first term
$d->promote;
is(($d->safe_psql('postgres', 'SELECT timeline FROM fencing.clock_timeline()')), '2',
	'D is promoted onto timeline 2 too');
my $d_promoted = $d->safe_psql('postgres', 'SELECT pg_catalog.clock_timestamp()');
$d->safe_psql('postgres', 'CREATE TABLE filler AS SELECT g FROM pg_catalog.generate_series(1, 1) g');
for (1 .. 6)
{
	$d->safe_psql('postgres', 'INSERT INTO filler SELECT pg_catalog.generate_series(1, 100000)');
	$d->safe_psql('postgres', 'SELECT pg_catalog.pg_switch_wal()');
	$d->safe_psql('postgres', 'CHECKPOINT');
}
my ($switch) = $d->safe_psql('postgres',
	q{SELECT pg_catalog.pg_read_file('pg_wal/00000002.history')}) =~ m{^1\t([0-9A-F]+/[0-9A-F]+)}m;
my $switch_seg = $d->safe_psql('postgres', "SELECT pg_catalog.pg_walfile_name('$switch')");
ok(!-e $d->data_dir . "/pg_wal/$switch_seg",
	"control: the WAL of D's promotion ($switch_seg, at $switch) is recycled");
my $d_term = term($d, 'jobs');
cmp_ok($d_term, '>', $b_first, "D issues ($d_term) above B's terms of its own band");
cmp_ok($d_term, '>=', $b_floor, "and above B's floor ($b_floor)");
is($d->safe_psql('postgres',
		"SELECT claimed_at <= '$d_promoted' FROM fencing.clock WHERE timeline = 2"),
	't', "D's claim is dated at its promotion all the same (its history file's time)");
my (undef, undef, $d_limit) = band($d);

# D, moved (pg_dump/pg_restore) into a new cluster F whose standby G, cut
# off, is promoted: above every band the source's servers used (C's, on
# timeline 3, the highest), however far the promotions shifted them
my $bindir = $a->config_data('--bindir');
my $dump = PostgreSQL::Test::Utils::tempdir . '/d.dump';
command_ok([ "$bindir/pg_dump", '-Fc', '-f', $dump, '-d', $d->connstr('postgres') ], 'pg_dump of D');
$d->stop;
my $f = PostgreSQL::Test::Cluster->new('f');
$f->init(allows_streaming => 1);
$f->append_conf('postgresql.conf', $conf);
$f->start;
command_ok([ "$bindir/pg_restore", '--exit-on-error', '-d', $f->connstr('postgres'), $dump ],
	'pg_restore into F');
my $g = streaming_standby($f, 'g');
cut_off($g);
my @f_terms = map { term($f, 'jobs') } 1 .. 3;
my $highest = (sort { $b <=> $a } ($b_limit, $c_limit, $d_limit))[0];
cmp_ok($f_terms[0], '>=', $highest,
	"F's first term ($f_terms[0]) is above every band the source's servers used ($highest)");
$f->stop('immediate');
$g->promote;
my $g_term = term($g, 'jobs');
cmp_ok($g_term, '>', $f_terms[-1], "G, F's standby promoted, issues ($g_term) above F's terms");
cmp_ok($g_term, '>', $highest, 'and above the source');
$g->stop;

sleep 1;
# two first terms at once: the one left open claims, the other claims the
# same band (the promotion's time is fixed) without waiting for it
my $s1 = $e->background_psql('postgres');
$s1->query_safe('BEGIN');
my $e_p1 = $s1->query_safe(q{SELECT fencing.fence_next_epoch('p1', 's1')});
my $e_p2 = $e->safe_psql('postgres', q{SELECT fencing.fence_next_epoch('p2', 's2')},
	timeout => 60);
$s1->query_safe('COMMIT');
$s1->quit;
is($e_p2, $e_p1, 'two first terms at once after a promotion, in two scopes: both from the floor, neither waits');
is($e->safe_psql('postgres',
		'SELECT count(*) || \' claims, \' || count(DISTINCT (generation, band_offset, claimed_at)) || \' band\''
		  . ' FROM fencing.clock WHERE timeline = 2'),
	'2 claims, 1 band', 'both claimed the same band, dated at the promotion');
cmp_ok(term($e, 'p1'), '>', $e_p1, 'and the next term of a scope is above');
my $e_term = term($e, 'jobs');
my ($e_tli, $e_floor) = band($e);
is($e_tli, '2', 'E is on timeline 2');
cmp_ok($e_floor, '>=', $a_limit, "E's first term ($e_term) is above the limit of A's band");
is($e->safe_psql('postgres',
		"SELECT pg_catalog.bool_and(claimed_at <= '$e_ended') FROM fencing.clock WHERE timeline = 2"),
	't', "E's claim is dated at the end of its recovery, not at its first term");
$e->stop;

done_testing();
