# 020_dump_partitions.pl: a database whose protected tables are partitioned
# (and sub-partitioned), with a tenant owning some, restores with no error
# and no manual step, and the restored fence works at once.
#
# Proves that
#   - pg_dump in the custom, directory (with pg_restore --jobs) and plain
#     formats restores with --exit-on-error / ON_ERROR_STOP = 1 into a fresh
#     database: every partition's TRUNCATE fence is created once (the dump
#     recreates it; the event trigger, which fires on the restore's ALTER
#     TABLE ... ENABLE ALWAYS TRIGGER of the parent, does not create it
#     first), and the fence triggers are the same as before;
#   - in the restored database a stale token, a tokenless write and a
#     TRUNCATE of a partition without a token are refused, the current term
#     is accepted, and a partition created or attached after the restore is
#     fenced (TRUNCATE trigger included);
#   - on the source, a partition created and one attached later get their
#     TRUNCATE fence from the event trigger (the control for the above);
#   - restored into another cluster whose roles have other OIDs, scopes keep
#     their owners and grants by role (1.4 stored OIDs: the restore handed
#     them to whatever roles had those numbers there).
#   - a dump of the application's schema alone (pg_dump -n, custom and
#     plain), restored into a database with a new extension, moves the
#     clock: its first term is above the source's, those issued after the
#     dump included (it was the source's first term again before);
#   - a dump of its schema with no rows (pg_dump -s -n), restored there: the
#     first term still moves above the source's (its terms are unknown);
#   - a dump of its rows alone (pg_dump -a -n, plain and custom), restored
#     with --disable-triggers into a database whose migrations made the
#     schema and its fence, moves the clock the same way.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('dump_partitions');
my $db   = 'postgres';

sub q1 { return $node->safe_psql($_[0], $_[1]); }

$node->safe_psql(
	$db, q{
	CREATE ROLE tenant LOGIN;
	CREATE ROLE helper;
	GRANT CREATE ON SCHEMA public TO tenant;
	GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO tenant;
	SET ROLE tenant;
	CREATE TABLE events (region text, id int, v text, tok bigint,
	                     PRIMARY KEY (region, id)) PARTITION BY LIST (region);
	CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');
	CREATE TABLE events_us PARTITION OF events FOR VALUES IN ('us')
	  PARTITION BY HASH (id);
	CREATE TABLE events_us_0 PARTITION OF events_us FOR VALUES WITH (MODULUS 2, REMAINDER 0);
	CREATE TABLE events_us_1 PARTITION OF events_us FOR VALUES WITH (MODULUS 2, REMAINDER 1);
	SELECT fencing.fence_next_epoch('events');
	SELECT fencing.protect('events', 'tok', scope => 'events');
	SELECT fencing.grant_scope('events', 'write', 'helper');
	-- made after protect(): by the event trigger
	CREATE TABLE events_ap PARTITION OF events FOR VALUES IN ('ap');
	CREATE TABLE events_sa (region text, id int, v text, tok bigint, PRIMARY KEY (region, id));
	ALTER TABLE events ATTACH PARTITION events_sa FOR VALUES IN ('sa');
	RESET ROLE;
	-- a superuser's per-row fenced partitioned table beside it
	CREATE TABLE rows_p (id int PRIMARY KEY, tok bigint) PARTITION BY RANGE (id);
	CREATE TABLE rows_p_1 PARTITION OF rows_p FOR VALUES FROM (0) TO (100);
	SELECT fencing.protect('rows_p', 'tok');
	INSERT INTO rows_p VALUES (1, 4);
});

my $old = q1($db, "SET ROLE tenant; SELECT fencing.fence_next_epoch('events')");
q1($db, "SET ROLE tenant; INSERT INTO events VALUES ('eu', 1, 'a', $old), ('us', 2, 'b', $old), ('ap', 3, 'c', $old), ('sa', 4, 'd', $old)");
my $cur = q1($db, "SET ROLE tenant; SELECT fencing.fence_next_epoch('events')");
q1($db, "SET ROLE tenant; UPDATE events SET v = 'new', tok = $cur WHERE id = 1");

my $triggers_sql = q{
	SELECT c.relname || ': ' || string_agg(t.tgname || ' ' || t.tgenabled::text, ', ' ORDER BY t.tgname COLLATE "C")
	  FROM pg_class c JOIN pg_trigger t ON t.tgrelid = c.oid
	 WHERE t.tgname LIKE 'zz_fence%'
	 GROUP BY c.relname ORDER BY c.relname COLLATE "C"};
my $triggers = q1($db, $triggers_sql);
like($triggers, qr/^events_ap: zz_fence_inserted A, zz_fence_row A, zz_fence_truncate A$/m,
	'source: a partition created after protect() has its TRUNCATE fence');
like($triggers, qr/^events_sa: zz_fence_inserted A, zz_fence_row A, zz_fence_truncate A$/m,
	'source: a partition attached after protect() has its TRUNCATE fence');
my $scopes_sql = 'SELECT scope, mark, owner::regrole FROM fencing.scopes ORDER BY scope COLLATE "C"';
my $scopes = q1($db, $scopes_sql);
my $data_sql = 'SELECT * FROM events ORDER BY id';
my $data = q1($db, $data_sql);

my $dir = PostgreSQL::Test::Utils::tempdir();
my @formats = (
	[ 'custom', [ '-Fc', '-f', "$dir/db.dump" ],
	  [ 'pg_restore', '--exit-on-error', "$dir/db.dump" ] ],
	[ 'directory', [ '-Fd', '-j', '2', '-f', "$dir/db.dir" ],
	  [ 'pg_restore', '--exit-on-error', '-j', '2', "$dir/db.dir" ] ],
	[ 'plain', [ '-Fp', '-f', "$dir/db.sql" ],
	  [ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/db.sql" ] ]);
for my $f (@formats)
{
	my ($fmt, $dump, $restore) = @$f;
	my $target = "restored_$fmt";
	$node->command_ok([ 'pg_dump', @$dump, '-d', $node->connstr($db) ], "pg_dump ($fmt)");
	q1($db, "CREATE DATABASE $target");
	my ($stdout, $stderr);
	my $ok = IPC::Run::run([ @$restore, '-d', $node->connstr($target) ],
		'>', \$stdout, '2>', \$stderr);
	ok($ok, "$fmt: restores with no error") or diag($stderr);
	unlike($stderr // '', qr/ERROR/, "$fmt: the restore printed no error");

	is(q1($target, $triggers_sql), $triggers,
		"$fmt: every fence trigger restored once, firing ALWAYS");
	is(q1($target, $scopes_sql), $scopes, "$fmt: scopes, marks and owners restored");
	is(q1($target, $data_sql), $data, "$fmt: the rows restored");

	is(sqlstate_error($node, $target,
			"SET ROLE tenant; INSERT INTO events VALUES ('eu', 9, 'zombie', $old)"),
		'ZF001', "$fmt: a stale token is refused at once");
	is(sqlstate_error($node, $target,
			"SET ROLE tenant; UPDATE events_us SET v = 'no token'"),
		'ZF002', "$fmt: a tokenless write to a sub-partitioned partition is refused");
	is(sqlstate_error($node, $target, "SET ROLE tenant; TRUNCATE events_sa"),
		'ZF002', "$fmt: TRUNCATE of a partition without a token is refused");
	is(sqlstate_error($node, $target, "INSERT INTO rows_p VALUES (1, 3) ON CONFLICT (id) DO UPDATE SET tok = 3"),
		'ZF001', "$fmt: a per-row stale token is refused");
	q1($target, "SET ROLE tenant; INSERT INTO events VALUES ('eu', 10, 'leader', $cur)");
	pass("$fmt: the current term is accepted");
	q1($target, q{GRANT CREATE ON SCHEMA public TO tenant; SET ROLE tenant;
		CREATE TABLE events_af PARTITION OF events FOR VALUES IN ('af');});
	like(q1($target, $triggers_sql),
		qr/^events_af: zz_fence_inserted A, zz_fence_row A, zz_fence_truncate A$/m,
		"$fmt: a partition created after the restore is fenced");
}

# Another cluster, its roles made in another order (other OIDs), the
# globals first as pg_dumpall --globals-only would.
my $other = PostgreSQL::Test::Cluster->new('other_cluster');
$other->init;
$other->start;
$other->safe_psql('postgres', q{
	CREATE ROLE intern; CREATE ROLE contractor;
	CREATE ROLE helper; CREATE ROLE tenant LOGIN;
	CREATE DATABASE moved;
});
isnt($other->safe_psql('postgres', "SELECT 'tenant'::regrole::oid"),
	q1($db, "SELECT 'tenant'::regrole::oid"), 'the other cluster gives the tenant another OID');
my ($stdout, $stderr);
IPC::Run::run([ 'pg_restore', '--exit-on-error', '-d', $other->connstr('moved'), "$dir/db.dump" ],
	'>', \$stdout, '2>', \$stderr);
unlike($stderr // '', qr/ERROR/, 'restored into another cluster with no error');
is($other->safe_psql('moved', q{SELECT owner::regrole::text FROM fencing.scopes WHERE scope = 'events'}),
	'tenant', 'the scope is still the tenant\'s, whatever OID the tenant has there');
is($other->safe_psql('moved', q{SELECT string_agg(grantee::regrole::text || ':' || privilege || ':' || granted_by::regrole::text, ',') FROM fencing.scope_grants WHERE scope = 'events'}),
	'helper:write:tenant', 'its grant is still the helper\'s, granted by the tenant');
is($other->safe_psql('moved', q{SELECT count(*) FROM fencing.health WHERE "check" LIKE '%dropped role%'}),
	'0', 'health finds no scope of a dropped role');

# A dump of the application's schema alone (pg_dump -n app), restored into
# a database whose extension is new: the fence's triggers come back with
# the rows, the clock and the scopes do not.  The restore moves the clock
# above the rows' tokens, and above the terms the source issued after the
# dump: its first term was the source's first term again before.
# the application's schema, as its migrations make it
my $app_schema = q{
	CREATE SCHEMA app;
	CREATE TABLE app.jobs (id int PRIMARY KEY, tok bigint, v text);
	CREATE TABLE app.parted (id int, tok bigint) PARTITION BY RANGE (id);
	CREATE TABLE app.parted_1 PARTITION OF app.parted FOR VALUES FROM (0) TO (100);
	SELECT fencing.protect('app.jobs', 'tok', scope => 'jobs');
	SELECT fencing.protect('app.parted', 'tok');
};
q1($db, $app_schema);
my $app_term = q1($db, "SELECT fencing.fence_next_epoch('jobs')");
q1($db, "INSERT INTO app.jobs VALUES (1, $app_term, 'a'); INSERT INTO app.parted VALUES (1, $app_term)");
my @app_formats = (
	[ 'custom', [ '-Fc', '-f', "$dir/app.dump" ],
	  [ 'pg_restore', '--exit-on-error', "$dir/app.dump" ] ],
	[ 'plain', [ '-Fp', '-f', "$dir/app.sql" ],
	  [ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/app.sql" ] ]);
for my $f (@app_formats)
{
	my ($fmt, $dump, $restore) = @$f;
	$node->command_ok([ 'pg_dump', '-n', 'app', @$dump, '-d', $node->connstr($db) ],
		"pg_dump -n app ($fmt)");
}
# the source goes on after the dump: its leader takes terms and writes
my $source_last;
$source_last = q1($db, "SELECT fencing.fence_next_epoch('jobs')") for 1 .. 3;
q1($db, "UPDATE app.jobs SET v = 'source', tok = $source_last WHERE id = 1");
for my $f (@app_formats)
{
	my ($fmt, $dump, $restore) = @$f;
	my $target = "app_only_$fmt";
	$other->safe_psql('postgres', "CREATE DATABASE $target");
	$other->safe_psql($target, 'SET client_min_messages = error; CREATE EXTENSION fencing');
	my ($out, $err);
	my $ok = IPC::Run::run([ @$restore, '-d', $other->connstr($target) ], '>', \$out, '2>', \$err);
	ok($ok, "-n app, $fmt: restores with no error") or diag($err);
	is($other->safe_psql($target, 'SELECT state, claimed_system_identifier, reason FROM fencing.clock_state()'),
		"moves|0|tokens restored above every term known (a fence restored without the extension's data)",
		"-n app, $fmt: the restored clock records an unknown server's tokens, and moves at its first term");
	my $first = $other->safe_psql($target, "SELECT fencing.fence_next_epoch('jobs')");
	cmp_ok($first, '>', $source_last,
		"-n app, $fmt: the first term is above every term the source issued, after the dump too");
	is(sqlstate_error($other, $target, "UPDATE app.jobs SET v = 'zombie', tok = $source_last WHERE id = 1"),
		'ZF001', "-n app, $fmt: the source's last leader is refused once the new leader has its term");
	$other->safe_psql($target, "UPDATE app.jobs SET v = 'leader', tok = $first WHERE id = 1");
	$other->safe_psql($target, "UPDATE app.parted SET tok = $first WHERE id = 1");
	pass("-n app, $fmt: the new leader writes, per row too");
}

# The application's schema alone with no rows (pg_dump -s -n app, as for a
# new environment or an empty queue): the restored fence has no token to
# read and the database no term; the source's terms are unknown, so the
# clock moves to a move's floor (before, its first term was 1 again).
$node->command_ok([ 'pg_dump', '-s', '-n', 'app', '-Fp', '-f', "$dir/schema.sql",
		'-d', $node->connstr($db) ], 'pg_dump -s -n app (plain)');
{
	my $target = 'schema_only';
	$other->safe_psql('postgres', "CREATE DATABASE $target");
	$other->safe_psql($target, 'SET client_min_messages = error; CREATE EXTENSION fencing');
	my ($out, $err);
	my $ok = IPC::Run::run([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/schema.sql",
			'-d', $other->connstr($target) ], '>', \$out, '2>', \$err);
	ok($ok, '-s -n app: restores with no error') or diag($err);
	is($other->safe_psql($target, 'SELECT count(*) FROM app.jobs'), '0', '-s -n app: no row');
	is($other->safe_psql($target, 'SELECT state, claimed_system_identifier FROM fencing.clock_state()'),
		'moves|0', '-s -n app: the clock records an unknown server, and moves at its first term');
	my $first = $other->safe_psql($target, "SELECT fencing.fence_next_epoch('jobs')");
	cmp_ok($first, '>', $source_last, '-s -n app: the first term is above every term the source issued');
	$other->safe_psql($target, "INSERT INTO app.jobs VALUES (1, $first, 'leader')");
	is(sqlstate_error($other, $target, "INSERT INTO app.jobs VALUES (2, $source_last, 'zombie')"),
		'ZF001', "-s -n app: the source's last leader is refused once the new leader has written");
	# a superuser's fence made by hand in a database that has issued terms reads nothing new
	$other->safe_psql($target, q{CREATE TABLE app.later (id int, tok bigint);
		CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE ON app.later FOR EACH ROW
			EXECUTE FUNCTION fencing.fence_trigger('tok')});
	is($other->safe_psql($target, "SELECT fencing.fence_next_epoch('jobs')"), $first + 1,
		'-s -n app: an empty fence made later, with terms issued, moves nothing');
}

# A dump of the application's rows alone (pg_dump -a -n app), restored with
# --disable-triggers into a database whose schema the application's
# migrations made, protect() included: the restore disables each table's
# triggers, loads its rows and enables them again, and the clock moves
# above the rows' tokens then (before, its first term was 1 again).
my $migrations = "SET client_min_messages = error; CREATE EXTENSION fencing; $app_schema";
$node->command_ok([ 'pg_dump', '-a', '-n', 'app', '--disable-triggers', '-Fp', '-f', "$dir/rows.sql",
		'-d', $node->connstr($db) ], 'pg_dump -a -n app --disable-triggers (plain)');
$node->command_ok([ 'pg_dump', '-a', '-n', 'app', '-Fc', '-f', "$dir/rows.dump",
		'-d', $node->connstr($db) ], 'pg_dump -a -n app (custom)');
for my $f (
	[ 'plain', [ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/rows.sql" ] ],
	[ 'custom', [ 'pg_restore', '--exit-on-error', '-a', '--disable-triggers', "$dir/rows.dump" ] ])
{
	my ($fmt, $restore) = @$f;
	my $target = "rows_only_$fmt";
	$other->safe_psql('postgres', "CREATE DATABASE $target");
	$other->safe_psql($target, $migrations);
	my ($out, $err);
	my $ok = IPC::Run::run([ @$restore, '-d', $other->connstr($target) ], '>', \$out, '2>', \$err);
	ok($ok, "-a -n app, $fmt: the rows restore with no error") or diag($err);
	is($other->safe_psql($target, 'SELECT count(*) FROM app.jobs') . '|' . $other->safe_psql($target, 'SELECT count(*) FROM app.parted'),
		'1|1', "-a -n app, $fmt: every row is there");
	is($other->safe_psql($target, 'SELECT state, claimed_system_identifier FROM fencing.clock_state()'),
		'moves|0', "-a -n app, $fmt: the clock records an unknown server's tokens once the triggers are enabled");
	my $first = $other->safe_psql($target, "SELECT fencing.fence_next_epoch('jobs')");
	cmp_ok($first, '>', $source_last, "-a -n app, $fmt: the first term is above every term the source issued");
	is(sqlstate_error($other, $target, "UPDATE app.jobs SET v = 'zombie', tok = $source_last WHERE id = 1"),
		'ZF001', "-a -n app, $fmt: the source's last leader is refused once the new leader has its term");
	$other->safe_psql($target, "UPDATE app.jobs SET v = 'leader', tok = $first WHERE id = 1");
	$other->safe_psql($target, "UPDATE app.parted SET tok = $first WHERE id = 1");
	pass("-a -n app, $fmt: the new leader writes, per row too");
}
$other->stop;

done_testing();
