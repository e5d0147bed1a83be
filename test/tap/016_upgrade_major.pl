# 016_upgrade_major.pl: pg_upgrade across major versions with the extension
# installed, then an asynchronous failover of the upgraded cluster.
#
# Runs only when FENCING_UPGRADE_OLD_INSTALL names the installation of the
# older server (its bin/ holds initdb, pg_ctl, postgres, with fencing
# installed for it); the newer one is the server the test runs with (PATH,
# and the Perl modules of its version: PostgreSQL::Test::Cluster starts the
# old server through install_path).  Skipped otherwise.  test/stages/matrix
# runs it for each pair of supported versions (15->17, 15->18, 17->18).
#
# History, for each pg_upgrade mode (copy, then --link):
#   A (old version, timeline 1, fencing preloaded) holds, in database
#   postgres: a tenant (a role that is not a superuser) owning a scope with
#   a grant to a helper role and a protected, sub-partitioned table; a
#   superuser's protected table; a lease; and in database legacy the
#   extension at SQL version 1.4.  A issues terms; its standby B is
#   promoted (timeline 2), issues terms and a lease grant, leaders write; B
#   is stopped and upgraded into C (new version, timeline 1, a new system
#   identifier); ALTER EXTENSION fencing UPDATE in each database.
# Proves that C keeps every mark, term, lease, grant, owner, fence trigger
# and row; refuses stale and tokenless writes at once (and counts them: the
# telemetry works); that the lease's holder renews it with its term; that C
# gets a streaming standby D that stops receiving before C's terms; C
# issues; C is lost; D is promoted: its next terms, in every scope and
# database, are above every term ever issued there, and no term is issued
# twice.
#
# A cluster of a server that sets the attribute option pg_attver (15.20,
# 17.12 and later back-branch releases stamp it on every column) cannot be
# upgraded to 18 as is: pg_upgrade's restore fails with 'unrecognized
# parameter "pg_attver"'.  The test strips it before pg_upgrade, as
# docs/operations.md tells users to; with FENCING_UPGRADE_KEEP_ATTVER=1 it
# does not (to see the failure).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $old_install = $ENV{FENCING_UPGRADE_OLD_INSTALL};
plan skip_all => 'FENCING_UPGRADE_OLD_INSTALL is not set: test/stages/matrix runs this file for each pair of versions (by hand: set it to the older installation and run the file with the newer server, docs/operations.md)'
  unless $old_install;

my $band = 2**40;
my @dbs = ('postgres', 'legacy');
my @issued;    # "db scope term"
my %max_issued;    # db => the highest term issued there

sub note_term
{
	my ($db, $scope, $t) = @_;
	push @issued, "$db $scope $t";
	$max_issued{$db} = $t if $t > ($max_issued{$db} // 0);
	return $t;
}

# issue NODE DB SCOPE HOLDER [ROLE]: a term, as ROLE (default: superuser)
sub issue
{
	my ($node, $db, $scope, $holder, $role) = @_;
	my $set = $role ? "SET ROLE $role;" : '';
	my $t = $node->safe_psql($db,
		"SET synchronous_commit = off; $set SELECT fencing.fence_next_epoch('$scope', '$holder')");
	return note_term($db, $scope, $t);
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

# What must survive, per database: a query each, compared before and after.
my %state_sql = (
	postgres => {
		scopes => 'SELECT * FROM fencing.scopes ORDER BY scope',
		terms  => 'SELECT * FROM fencing.terms ORDER BY scope, epoch',
		leases => 'SELECT * FROM fencing.leases ORDER BY scope',
		grants => 'SELECT scope, grantee::regrole, privilege, granted_by::regrole, granted_at FROM fencing.scope_grants ORDER BY 1, 2, 3',
		owners => 'SELECT scope, owner::regrole FROM fencing.scopes ORDER BY scope',
		triggers => q{SELECT c.relname || ': ' || string_agg(t.tgname || ' ' || t.tgenabled::text, ', ' ORDER BY t.tgname COLLATE "C")
			FROM pg_class c JOIN pg_trigger t ON t.tgrelid = c.oid
			WHERE t.tgname LIKE 'zz_fence%' GROUP BY c.relname ORDER BY c.relname COLLATE "C"},
		rows => q{SELECT 'events', * FROM events UNION ALL SELECT 'jobs', id::text, NULL::int, v, tok FROM jobs ORDER BY 1, 2, 3},
	},
	# the 1.4 SQL: what 1.4 and 1.5 have alike
	legacy => {
		scopes => 'SELECT scope, mark, epoch, holder FROM fencing.scopes ORDER BY scope',
		terms  => 'SELECT epoch, scope, holder, issued_at FROM fencing.terms ORDER BY scope, epoch',
		rows   => 'SELECT * FROM ljobs ORDER BY id',
	});

sub state_of
{
	my ($node) = @_;
	my %s;
	for my $db (@dbs)
	{
		$s{$db}{$_} = $node->safe_psql($db, $state_sql{$db}{$_}) for keys %{ $state_sql{$db} };
	}
	return \%s;
}

my $probe = PostgreSQL::Test::Cluster->new('probe');
my $new_bindir = $probe->config_data('--bindir');
my $new_version = $probe->pg_version;
my $old_bindir = "$old_install/bin";

# --- A and B on the old version; B promoted to timeline 2.
my $a = PostgreSQL::Test::Cluster->new('a', install_path => $old_install);
$a->init(allows_streaming => 1);
drop_unknown_settings($a);
$a->append_conf('postgresql.conf', "autovacuum = off\nshared_preload_libraries = 'fencing'\n");
$a->start;
my $old_version = $a->pg_version;
$a->safe_psql('postgres', q{
	CREATE EXTENSION fencing;
	CREATE ROLE tenant LOGIN;
	CREATE ROLE helper;
	GRANT CREATE ON SCHEMA public TO tenant;
	GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO tenant;
	SET ROLE tenant;
	CREATE TABLE events (region text, id int, v text, tok bigint,
	                     PRIMARY KEY (region, id)) PARTITION BY LIST (region);
	CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');
	CREATE TABLE events_us PARTITION OF events FOR VALUES IN ('us') PARTITION BY HASH (id);
	CREATE TABLE events_us_0 PARTITION OF events_us FOR VALUES WITH (MODULUS 2, REMAINDER 0);
	CREATE TABLE events_us_1 PARTITION OF events_us FOR VALUES WITH (MODULUS 2, REMAINDER 1);
	SELECT fencing.create_scope('events');
	SELECT fencing.protect('events', 'tok', scope => 'events');
	SELECT fencing.grant_scope('events', 'write', 'helper');
	RESET ROLE;
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
	CREATE DATABASE legacy;
});
$a->safe_psql('legacy', q{
	CREATE EXTENSION fencing VERSION '1.4';
	CREATE TABLE ljobs (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('ljobs', 'tok', scope => 'ljobs');
});
issue($a, 'postgres', 'jobs', "a-$_") for 1 .. 3;
issue($a, 'postgres', 'other', 'a');
issue($a, 'postgres', 'events', 'a', 'tenant');
issue($a, 'legacy', 'ljobs', "a-$_") for 1 .. 2;
$a->backup('bk');
my $b = PostgreSQL::Test::Cluster->new('b', install_path => $old_install);
$b->init_from_backup($a, 'bk', has_streaming => 1);
$b->start;
$a->wait_for_catchup($b);
$a->stop('immediate');
$b->promote;
$b->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'B not promoted';
my $b_term = issue($b, 'postgres', 'jobs', 'b');
cmp_ok($b_term, '>=', $band, "old version: B's term ($b_term) is in timeline 2's band");
my $l_term = issue($b, 'legacy', 'ljobs', 'b');
my ($granted, $lease_term) = split /\|/, $b->safe_psql('postgres',
	q{SET ROLE tenant; SELECT granted, term FROM fencing.acquire_lease('events', 'worker-1', '1 hour')});
is($granted, 't', 'old version: the tenant is granted the lease');
note_term('postgres', 'events', $lease_term);
$b->safe_psql('postgres', qq{
	INSERT INTO jobs VALUES (1, $b_term, 'B leader');
	SET ROLE tenant;
	INSERT INTO events VALUES ('eu', 1, 'lease holder', $lease_term), ('us', 2, 'lease holder', $lease_term);
});
$b->safe_psql('legacy', "INSERT INTO ljobs VALUES (1, $l_term, 'B leader')");
my $before = state_of($b);
if ($old_version < 18 && $new_version >= 18 && !$ENV{FENCING_UPGRADE_KEEP_ATTVER})
{
	# the runbook's step (docs/operations.md): strip pg_attver, keep any
	# other attribute option, in every database
	for my $db (@dbs)
	{
		$b->safe_psql($db, q{
			UPDATE pg_catalog.pg_attribute a
			   SET attoptions = (SELECT pg_catalog.array_agg(o) FROM pg_catalog.unnest(a.attoptions) o
			                      WHERE o NOT LIKE 'pg\_attver=%')
			 WHERE a.attoptions::text LIKE '%pg\_attver=%'
			   AND a.attrelid >= 16384;
		});
	}
}
$b->stop;

# two upgrades of one B are two copies of one database, each its own fence:
# terms are compared within B's history and one of them
my @history = @issued;
my %history_max = %max_issued;
for my $mode ('copy', 'link')
{
	@issued = @history;
	%max_issued = %history_max;
	my $c = PostgreSQL::Test::Cluster->new("c_$mode");
	# 18's initdb turns data checksums on by default; the old one did not
	$c->init(allows_streaming => 1,
		extra => ($new_version >= 18 && $old_version < 18 ? ['--no-data-checksums'] : []));
	$c->append_conf('postgresql.conf', "autovacuum = off\nshared_preload_libraries = 'fencing'\n");
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
			"$mode: pg_upgrade $old_version to $new_version of B into C");
	}
	$c->start;
	for my $db (@dbs)
	{
		$c->safe_psql($db, 'ALTER EXTENSION fencing UPDATE');
		is($c->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'fencing'}),
			'1.5', "$mode: $db: ALTER EXTENSION fencing UPDATE brings it to 1.5");
	}
	my $after = state_of($c);
	for my $db (@dbs)
	{
		for my $what (sort keys %{ $before->{$db} })
		{
			is($after->{$db}{$what}, $before->{$db}{$what}, "$mode: $db: every one of $what is kept");
		}
	}

	# stale and tokenless writes refused at once, before any new term
	is(sqlstate_error($c, 'postgres', "INSERT INTO jobs VALUES (2, " . ($b_term - 1) . ", 'stale')"),
		'ZF001', "$mode: a stale write is refused at once");
	is(sqlstate_error($c, 'postgres',
			"SET ROLE tenant; INSERT INTO events VALUES ('eu', 3, 'zombie', " . ($lease_term - 1) . ")"),
		'ZF001', "$mode: the tenant's stale write to a partition is refused at once");
	is(sqlstate_error($c, 'postgres', "SET ROLE tenant; UPDATE events_us SET v = 'no token'"),
		'ZF002', "$mode: a tokenless write to a sub-partitioned partition is refused");
	is(sqlstate_error($c, 'legacy', "INSERT INTO ljobs VALUES (2, " . ($l_term - 1) . ", 'stale')"),
		'ZF001', "$mode: legacy (1.4 SQL, updated): a stale write is refused at once");
	is(sqlstate_error($c, 'postgres', "SET ROLE helper; SELECT fencing.fence_next_epoch('events')"),
		'42501', "$mode: the helper (write, not lead) still may not issue the tenant's terms");
	# the lease lives on: its holder renews it with its term and writes
	is($c->safe_psql('postgres',
			"SET ROLE tenant; SELECT renewed FROM fencing.renew_lease('events', 'worker-1', $lease_term, '1 hour')"),
		't', "$mode: the lease's holder renews it with its term");
	$c->safe_psql('postgres',
		"SET ROLE tenant; INSERT INTO events VALUES ('us', 4, 'lease holder on C', $lease_term)");
	is($c->safe_psql('postgres', q{SELECT lease_live, lease_fenced, rejected_stale, rejected_missing FROM fencing.scope_stats WHERE scope = 'events'}),
		't|f|1|1', "$mode: telemetry: the lease is live, not fenced; the refused writes are counted");
	is($c->safe_psql('postgres', q{SELECT count(*) FROM fencing.last_rejections WHERE scope = 'jobs'}),
		'1', "$mode: telemetry: the stale write is in last_rejections");
	# 1.5 carried its claim over: it names B, so C's first term moves the
	# generation; 1.4 had none: the first term claims it (above every band of
	# the scopes' terms, checked below)
	is($c->safe_psql('postgres', 'SELECT state FROM fencing.clock_state()'), 'moves',
		"$mode: postgres: C's clock moves at its first term");
	is($c->safe_psql('legacy', 'SELECT state FROM fencing.clock_state()'), 'unclaimed',
		"$mode: legacy: the clock of the updated 1.4 install is unclaimed until its first term");
	# the runbook's optional step (docs/operations.md), after --link: every
	# issued scope's mark lifted to C's band, the old cluster's holders fenced
	if ($mode eq 'link')
	{
		my ($n, $lifted) = (1, 0);
		for (1 .. 10)
		{
			$n = $c->safe_psql('postgres', 'SELECT fencing.fence_older_timelines()');
			$lifted += $n;
			last if $n == 0;
		}
		cmp_ok($lifted, '>', 0, "link: fence_older_timelines() lifts the old cluster's marks on C ($lifted)");
		is(sqlstate_error($c, 'postgres', "INSERT INTO jobs VALUES (5, $b_term, 'B leader, old cluster')"),
			'ZF001', "link: after it the holder of B's last term is fenced");
	}

	$c->backup("bk_$mode");
	my $d = PostgreSQL::Test::Cluster->new("d_$mode");
	$d->init_from_backup($c, "bk_$mode", has_streaming => 1);
	$d->start;
	$c->wait_for_catchup($d);
	$d->append_conf('postgresql.conf', "primary_conninfo = ''\n");
	$d->reload;
	$d->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
	  or die 'WAL receiver did not stop';
	for my $s (['postgres', 'jobs'], ['postgres', 'events', 'tenant'], ['legacy', 'ljobs'])
	{
		my ($db, $scope, $role) = @$s;
		my $t = issue($c, $db, $scope, "c-$mode", $role);
		cmp_ok($t, '>', $history_max{$db},
			"$mode: C's first term of $db '$scope' ($t) is above every term of the old cluster there ($history_max{$db})");
	}
	issue($c, 'postgres', 'jobs', "c-$mode-$_") for 1 .. 4;
	issue($c, 'postgres', 'other', "c-$mode");
	issue($c, 'legacy', 'ljobs', "c-$mode-2");
	$c->stop('immediate');
	$d->promote;
	$d->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'D not promoted';
	my %top = %max_issued;
	for my $s (['postgres', 'jobs'], ['postgres', 'other'], ['postgres', 'events', 'tenant'],
		['legacy', 'ljobs'])
	{
		my ($db, $scope, $role) = @$s;
		my $t = issue($d, $db, $scope, "d-$mode", $role);
		cmp_ok($t, '>', $top{$db},
			"$mode: after the promotion of D the next term of $db '$scope' ($t) is above every term ever issued there ($top{$db})");
	}
	$d->stop;

	my %seen;
	my @twice = grep { $seen{$_}++ } @issued;
	is(scalar(@twice), 0, "$mode: no term was issued twice in any scope") or diag("@twice");
}
done_testing();
