# 016_upgrade_major.pl: pg_upgrade across major versions with the extension
# installed, then an asynchronous failover of the upgraded cluster.
#
# Runs only when FENCING_UPGRADE_OLD_INSTALL names the installation of the
# older server (its bin/ holds initdb, pg_ctl, postgres, with fencing
# installed for it); the newer one is the server the test runs with (PATH,
# and the Perl modules of its version: PostgreSQL::Test::Cluster starts the
# old server through install_path).  Skipped otherwise (test/run).
#
# History, for each pg_upgrade mode (copy, then --link):
#   A (old version, timeline 1) issues terms; its standby B is promoted
#   (timeline 2) and issues, a leader writes; B is stopped and upgraded
#   into C (new version, timeline 1, a new system identifier); ALTER
#   EXTENSION fencing UPDATE; C keeps every mark and term and refuses a
#   stale write at once; C gets a streaming standby D that stops receiving
#   before C's first term; C issues; C is lost; D is promoted: its next
#   terms are above every term ever issued, and no term is issued twice.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $old_install = $ENV{FENCING_UPGRADE_OLD_INSTALL};
plan skip_all => 'a test by hand, pg_upgrade across majors: set FENCING_UPGRADE_OLD_INSTALL '
  . 'to the older installation (bin/ with initdb, pg_ctl, postgres; fencing installed for it) '
  . 'and run this file with the newer server (docs/operations.md, pg_upgrade)'
  unless $old_install;

my $band = 2**40;
my @issued;
my $max_issued = 0;

sub issue
{
	my ($node, $scope, $holder) = @_;
	my $t = $node->safe_psql('postgres',
		"SET synchronous_commit = off; SELECT fencing.fence_next_epoch('$scope', '$holder')");
	push @issued, "$t $scope";
	$max_issued = $t if $t > $max_issued;
	return $t;
}

sub sqlstate_of
{
	my ($node, $sql) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	return $ret == 0 ? undef : $stderr =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1 : $stderr;
}

# The newer version's PostgreSQL::Test::Cluster writes settings the older
# server may not know (18's allows_streaming sets autovacuum_worker_slots).
sub drop_unknown_settings
{
	my ($node) = @_;
	my $file = $node->data_dir . '/postgresql.conf';
	my $conf = slurp_file($file);
	$conf =~ s/^autovacuum_worker_slots\b.*$//mg
	  if $node->pg_version < 18;
	open(my $fh, '>', $file) or die "cannot write $file: $!";
	print $fh $conf;
	close($fh);
	return;
}

my $new_bindir = PostgreSQL::Test::Cluster->new('probe')->config_data('--bindir');
my $old_bindir = "$old_install/bin";

# --- A and B on the old version; B promoted to timeline 2.
my $a = PostgreSQL::Test::Cluster->new('a', install_path => $old_install);
$a->init(allows_streaming => 1);
drop_unknown_settings($a);
$a->append_conf('postgresql.conf', "autovacuum = off\n");
$a->start;
$a->safe_psql('postgres', q{
	CREATE EXTENSION fencing;
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
});
issue($a, 'jobs', "a-$_") for 1 .. 3;
issue($a, 'other', 'a');
$a->backup('bk');
my $b = PostgreSQL::Test::Cluster->new('b', install_path => $old_install);
$b->init_from_backup($a, 'bk', has_streaming => 1);
$b->start;
$a->wait_for_catchup($b);
$a->stop('immediate');
$b->promote;
$b->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'B not promoted';
my $b_term = issue($b, 'jobs', 'b');
cmp_ok($b_term, '>=', $band, "old version: B's term ($b_term) is in timeline 2's band");
$b->safe_psql('postgres', "INSERT INTO jobs VALUES (1, $b_term, 'B leader')");
my $marks = $b->safe_psql('postgres', 'SELECT string_agg(scope || mark, \',\' ORDER BY scope) FROM fencing.scopes');
# Debian's PostgreSQL 15.20 on this machine stamps an attribute option
# pg_attver on every column it creates, which no newer server accepts and
# ALTER TABLE ... RESET does not remove: pg_upgrade fails on any table, with
# or without fencing.  With FENCING_UPGRADE_RESET_ATTVER=1 the test clears
# it in the catalog of the relations pg_upgrade carries over.
if ($ENV{FENCING_UPGRADE_RESET_ATTVER})
{
	$b->safe_psql('postgres', q{
		UPDATE pg_catalog.pg_attribute a SET attoptions = NULL
		  FROM pg_catalog.pg_class c
		 WHERE c.oid = a.attrelid AND a.attoptions IS NOT NULL
		   AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
	});
}
$b->stop;

# two upgrades of one B are two copies of one database, each its own fence:
# terms are compared within B's history and one of them
my @history = @issued;
my $history_max = $max_issued;
for my $mode ('copy', 'link')
{
	@issued = @history;
	$max_issued = $history_max;
	my $c = PostgreSQL::Test::Cluster->new("c_$mode");
	$c->init(allows_streaming => 1, extra => ['--no-data-checksums']);
	$c->append_conf('postgresql.conf', "autovacuum = off\n");
	{
		my $cwd = PostgreSQL::Test::Utils::tempdir;
		chdir $cwd;
		command_ok(
			[
				"$new_bindir/pg_upgrade", '--no-sync',
				($mode eq 'link' ? ('--link') : ()),
				'-d', $b->data_dir, '-D', $c->data_dir,
				'-b', $old_bindir, '-B', $new_bindir,
				'-s', $c->host, '-p', $b->port, '-P', $c->port
			],
			"pg_upgrade ($mode) of B into C");
	}
	$c->start;
	$c->safe_psql('postgres', 'ALTER EXTENSION fencing UPDATE');
	is($c->safe_psql('postgres', 'SELECT string_agg(scope || mark, \',\' ORDER BY scope) FROM fencing.scopes'),
		$marks, "$mode: every mark is kept");
	is(sqlstate_of($c, "INSERT INTO jobs VALUES (2, " . ($b_term - 1) . ", 'stale')"),
		'ZF001', "$mode: a stale write is refused at once");
	is($c->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'moves',
		"$mode: C's clock moves at its first term");

	$c->backup("bk_$mode");
	my $d = PostgreSQL::Test::Cluster->new("d_$mode");
	$d->init_from_backup($c, "bk_$mode", has_streaming => 1);
	$d->start;
	$c->wait_for_catchup($d);
	$d->append_conf('postgresql.conf', "primary_conninfo = ''\n");
	$d->reload;
	$d->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
	  or die 'WAL receiver did not stop';
	issue($c, 'jobs', "c-$mode-$_") for 1 .. 5;
	issue($c, 'other', "c-$mode");
	$c->stop('immediate');
	$d->promote;
	$d->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'D not promoted';
	my $before = $max_issued;
	for my $scope ('jobs', 'other')
	{
		my $t = issue($d, $scope, "d-$mode");
		cmp_ok($t, '>', $before,
			"$mode: after the promotion of D the next term of '$scope' ($t) is above every term ever issued ($before)");
	}
	$d->stop;

	my %seen;
	my @twice = grep { $seen{$_}++ } @issued;
	is(scalar(@twice), 0, "$mode: no term was issued twice in any scope") or diag("@twice");
}
done_testing();
