# 015_clock_unclean_start.pl: a copy of the data directory (a file-system
# snapshot) keeps the system identifier, the database and the timeline; no
# data can tell it from the original.  With fencing preloaded, the server
# knows it started from a data directory not shut down cleanly.
#
# Proves, fencing preloaded:
#   - a clean restart leaves the clock claimed; a standby that started from
#     a base backup and is promoted issues at once (a new timeline);
#   - a crash-consistent copy of the primary (cold copy after an immediate
#     stop), restored after the original went on issuing terms: with
#     fencing.clock_unclean_start = 'issue' its clock is 'unconfirmed' and
#     fencing.health warns; with 'confirm' it refuses to issue (ZF006) and
#     health says so (critical) until a superuser calls
#     fencing.confirm_clock(), whose band is above every term the original
#     issued after the copy was made (the terms the copy would otherwise
#     issue again, shown by a control: the copy's sequence and marks are
#     behind them);
#   - the confirmation holds until the next start: a clean restart keeps
#     it, a crash asks again;
#   - a snapshot of a standby taken right after its promotion, before the
#     promotion's checkpoint (pg_control still names the old timeline; its
#     crash recovery ends on the promoted one, where the original goes on
#     issuing), is unconfirmed too, and refuses with 'confirm'.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::RecursiveCopy;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = "shared_preload_libraries = 'fencing'\nautovacuum = off\n";

sub clock_finding
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT coalesce(string_agg(severity, ','), 'none') FROM fencing.health
		   WHERE "check" = 'clock not confirmed since an unclean start'});
}

my $orig = PostgreSQL::Test::Cluster->new('orig');
$orig->init(allows_streaming => 1);
$orig->append_conf('postgresql.conf', $conf . "fencing.clock_unclean_start = 'confirm'\n");
$orig->start;
$orig->safe_psql('postgres', 'CREATE EXTENSION fencing');
term($orig, 'jobs') for 1 .. 3;
is($orig->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'claimed',
	'after the first term the clock is claimed');

# a standby from a base backup (its pg_control copy says "in production")
$orig->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($orig, 'bk', has_streaming => 1);
$standby->start;

$orig->restart;
is($orig->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'claimed',
	'a clean restart leaves the clock claimed');
is(clock_finding($orig), 'none', 'and health has no clock finding');
term($orig, 'jobs');
$orig->wait_for_catchup($standby);

# --- a crash-consistent copy of the data directory
$orig->stop('immediate');
$orig->backup_fs_cold('snap');
$orig->start;
is($orig->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'),
	'awaits confirmation', 'after a crash the clock awaits confirmation');
is(sqlstate_error($orig, 'postgres', "SELECT fencing.fence_next_epoch('jobs')"),
	'ZF006', 'and refuses to issue (ZF006)');
is(clock_finding($orig), 'critical', 'health reports it as critical');
my $floor = $orig->safe_psql('postgres', 'SELECT fencing.confirm_clock()');
my $after_copy = 0;
for (1 .. 40) { $after_copy = term($orig, 'jobs'); }
cmp_ok($after_copy, '>=', $floor, "once confirmed the original issues again ($after_copy)");
my $other_after_copy = term($orig, 'other');
$orig->stop('immediate');    # the original is gone; the copy takes over

# the standby, promoted, issues at once: a new timeline has a band of its own
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'new timeline',
	'a standby started from a base backup and promoted is on a new timeline');
cmp_ok(term($standby, 'standby-scope'), '>', 0, 'and issues without a confirmation');
$standby->stop;

my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init_from_backup($orig, 'snap');
$copy->append_conf('postgresql.conf', "fencing.clock_unclean_start = 'issue'\n");
$copy->start;
cmp_ok($copy->safe_psql('postgres', "SELECT mark FROM fencing.scopes WHERE scope = 'jobs'"),
	'<', $after_copy, "control: the copy's mark is behind the terms the original issued since");
is($copy->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'unconfirmed',
	"the copy's clock is unconfirmed (fencing.clock_unclean_start = 'issue')");
is(clock_finding($copy), 'warning', 'health warns');

$copy->append_conf('postgresql.conf', "fencing.clock_unclean_start = 'confirm'\n");
$copy->reload;
is(sqlstate_error($copy, 'postgres', "SELECT fencing.fence_next_epoch('jobs')"),
	'ZF006', "with 'confirm' the copy refuses to issue (ZF006)");
is(sqlstate_error($copy, 'postgres', "SELECT fencing.acquire_lease('other', 'w', '1 minute')"),
	'ZF006', 'a lease too');
is(clock_finding($copy), 'critical', 'health reports it as critical');
my $copy_floor = $copy->safe_psql('postgres', 'SELECT fencing.confirm_clock()');
cmp_ok($copy_floor, '>', $after_copy,
	"confirm_clock() moves the band ($copy_floor) above the terms the original issued after the copy");
cmp_ok(term($copy, 'jobs'), '>', $after_copy, 'the next term is above them');
cmp_ok(term($copy, 'other'), '>', $other_after_copy, 'in every scope');
is(clock_finding($copy), 'none', 'health has no clock finding once confirmed');

$copy->restart;
is($copy->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'claimed',
	'a clean restart keeps the clock claimed');
term($copy, 'jobs');
$copy->stop('immediate');
$copy->start;
is(sqlstate_error($copy, 'postgres', "SELECT fencing.fence_next_epoch('jobs')"),
	'ZF006', 'a crash asks for a confirmation again');
$copy->stop;

# --- a snapshot of a standby right after its promotion, before the
# promotion's checkpoint: the checkpointer is held (SIGSTOP), so pg_control
# keeps the timeline of the last restartpoint
sub server_pids
{
	my ($node) = @_;
	my $postmaster = $node->{_pid};
	die "no postmaster pid" unless defined $postmaster && $postmaster =~ /^\d+$/;
	my @children;
	opendir(my $proc, '/proc') or die "no /proc: $!";
	for my $pid (grep { /^\d+$/ } readdir($proc))
	{
		open(my $fh, '<', "/proc/$pid/stat") or next;
		my $stat = <$fh>;
		close($fh);
		next unless defined $stat && $stat =~ /\)\s+\S+\s+(\d+)/;
		push @children, $pid if $1 == $postmaster;
	}
	closedir($proc);
	return ($postmaster, @children);
}

# processes this test holds (SIGSTOP) are let go however it ends: a server
# left stopped would outlive the test, and the ports and files it holds
my @frozen;
END { kill('CONT', @frozen) if @frozen; }

my $prim = PostgreSQL::Test::Cluster->new('prim');
$prim->init(allows_streaming => 1);
$prim->append_conf('postgresql.conf', $conf . "fencing.clock_unclean_start = 'confirm'\n");
$prim->start;
$prim->safe_psql('postgres', 'CREATE EXTENSION fencing');
term($prim, 'jobs') for 1 .. 3;
$prim->backup('bk2');
my $promoted = PostgreSQL::Test::Cluster->new('promoted');
$promoted->init_from_backup($prim, 'bk2', has_streaming => 1);
$promoted->start;
$prim->wait_for_catchup($promoted);
my $checkpointer = $promoted->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
die "no checkpointer found" unless $checkpointer =~ /^\d+$/;
push @frozen, $checkpointer;
kill('STOP', $checkpointer) or die "cannot stop the checkpointer: $!";
$prim->stop('immediate');
$promoted->promote;
my $promoted_term = term($promoted, 'jobs');
is($promoted->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'claimed',
	'a promoted standby issues at once (its start was a standby\'s)');

# the snapshot: every process of the server held while the files are copied
# the postmaster first, so that it starts no process while the others are
# held; a backend that exits meanwhile (the last psql's) is no longer there
my ($postmaster, @children) = server_pids($promoted);
push @frozen, $postmaster, @children;
kill('STOP', $postmaster) or die "cannot hold the postmaster: $!";
kill('STOP', $_) for @children;
my $snapdir = $promoted->backup_dir . '/snap2';
PostgreSQL::Test::RecursiveCopy::copypath($promoted->data_dir, $snapdir);
kill('CONT', @frozen);
@frozen = ();
unlink("$snapdir/postmaster.pid");
my ($control) = run_command([ 'pg_controldata', $snapdir ]);
like($control, qr/Latest checkpoint's TimeLineID:\s+1\n/,
	"control: the snapshot's pg_control names the timeline before the promotion");

# the original goes on issuing on timeline 2, then is lost
my $promoted_last = 0;
for (1 .. 40) { $promoted_last = term($promoted, 'jobs'); }
cmp_ok($promoted_last, '>', $promoted_term, "the original goes on issuing ($promoted_last)");
$promoted->stop('immediate');

my $copy2 = PostgreSQL::Test::Cluster->new('copy2');
$copy2->init_from_backup($promoted, 'snap2');
$copy2->append_conf('postgresql.conf', "fencing.clock_unclean_start = 'issue'\n");
$copy2->start;
is($copy2->safe_psql('postgres', 'SELECT pg_catalog.pg_is_in_recovery()'), 'f',
	'the snapshot starts as a primary');
cmp_ok($copy2->safe_psql('postgres', "SELECT mark FROM fencing.scopes WHERE scope = 'jobs'"),
	'<', $promoted_last, "control: the snapshot's mark is behind the terms the original issued since");
is($copy2->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'unconfirmed',
	"the snapshot's clock is unconfirmed, though it issues on a timeline pg_control does not name");
is(clock_finding($copy2), 'warning', 'health warns');
$copy2->append_conf('postgresql.conf', "fencing.clock_unclean_start = 'confirm'\n");
$copy2->reload;
is(sqlstate_error($copy2, 'postgres', "SELECT fencing.fence_next_epoch('jobs')"),
	'ZF006', "with 'confirm' the snapshot refuses to issue (ZF006)");
$copy2->safe_psql('postgres', 'SELECT fencing.confirm_clock()');
cmp_ok(term($copy2, 'jobs'), '>', $promoted_last,
	'once confirmed, its next term is above every term the original issued');
$copy2->stop;
done_testing();
