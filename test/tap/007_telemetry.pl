# 007_telemetry.pl: the statistics, with fencing in
# shared_preload_libraries.
#
# Proves that
#   - each kind of event, caused from several sessions (each its own psql,
#     with its own application_name), is counted per scope and per table:
#     stale (ZF001), missing (ZF002), not issued (ZF003), conflict (ZF005),
#     skipped rows, bypassed writes, terms, lease grants, expiries (a grant
#     that took over an expired lease) and refused renewals; rejections are
#     counted although their transactions rolled back;
#   - the last occurrence of each kind names its token, mark, role,
#     application and client, and the latest session's wins;
#   - each rejection is logged once (LOG, with its SQLSTATE in the text);
#   - a role with only pg_monitor reads the views;
#   - no increment is lost: pgbench, 8 clients x 200 transactions each
#     rejected with ZF001, counts 1600;
#   - stats_reset() starts the counters again from 0.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('telemetry', "shared_preload_libraries = 'fencing'");
my $db = 'postgres';

sub q1 { return $node->safe_psql($db, $_[0]); }

# One session of role "app" named $app; returns psql's stderr (the errors).
sub session
{
	my ($app, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db,
		"SET ROLE app; SET application_name = '$app';\n$sql",
		on_error_stop => 0);
	return $err;
}

q1(q{
	CREATE ROLE app;
	CREATE ROLE monitor LOGIN IN ROLE pg_monitor;
	CREATE TABLE t (id int PRIMARY KEY, v text, tok bigint);
	SELECT fencing.protect('t', 'tok', scope => 'tele');
	CREATE TABLE sk (id int PRIMARY KEY, v text, tok bigint);
	SELECT fencing.protect('sk', 'tok', scope => 'tele', on_stale => 'skip');
	CREATE TABLE per_row (id int PRIMARY KEY, v text, tok bigint);
	SELECT fencing.protect('per_row', 'tok');
	GRANT ALL ON t, sk, per_row TO app;
});
my $t1 = q1("SELECT fencing.fence_next_epoch('tele', 'leader-1')");
q1("SELECT fencing.grant_scope('tele', 'write', 'app')");
q1("INSERT INTO t VALUES (1, 'one', $t1)");
q1("INSERT INTO sk VALUES (1, 'one', $t1), (2, 'two', $t1)");
q1("INSERT INTO per_row VALUES (1, 'one', 5)");
my $t2 = q1("SELECT fencing.fence_next_epoch('tele', 'leader-2')");
is(q1("SELECT enabled FROM fencing.stats_info()"), 't', 'statistics are collected when preloaded');

my $logpos = -s $node->logfile;

# stale: two sessions of worker-A, then one of worker-B (the last)
like(session('worker-A', "UPDATE t SET v = 'a', tok = $t1 WHERE id = 1"), qr/ZF001|stale/, 'stale write rejected (A1)');
like(session('worker-A', "UPDATE t SET v = 'a', tok = $t1 WHERE id = 1"), qr/stale/, 'stale write rejected (A2)');
like(session('worker-B', "INSERT INTO t VALUES (2, 'b', $t1)"), qr/stale/, 'stale insert rejected (B)');
like(session('worker-C', "UPDATE t SET v = 'c' WHERE id = 1"), qr/missing fencing token/, 'missing token rejected');
like(session('worker-D', "UPDATE t SET v = 'd', tok = 999 WHERE id = 1"), qr/was not issued/, 'token not issued rejected');
like(session('worker-E', "BEGIN; SELECT fencing.use_token('tele', $t2); UPDATE t SET v = 'e', tok = 77 WHERE id = 1;"),
	qr/disagrees with the declared token/, 'conflicting token rejected');
is(session('worker-F', "UPDATE sk SET v = 'f', tok = $t1"), '', 'stale rows skipped without an error');
like(session('worker-G', "BEGIN; SELECT fencing.use_token(4); DELETE FROM per_row WHERE id = 1;"), qr/stale/, 'per-row stale delete rejected');
is(session('worker-H', "UPDATE t SET v = 'current', tok = $t2 WHERE id = 1"), '', 'current term accepted');
q1("BEGIN; SET LOCAL fencing.bypass = on; UPDATE t SET v = 'maint' WHERE id = 1; INSERT INTO t VALUES (3, 'm', NULL); COMMIT;");

# leases: a grant, a takeover of an expired lease, a refused renewal, a
# grant after a release (no expiry)
my $l1 = q1("SELECT term FROM fencing.acquire_lease('L', 'h1', '1 millisecond')");
q1("SELECT pg_sleep(0.05)");
my $l2 = q1("SELECT term FROM fencing.acquire_lease('L', 'h2', '1 hour')");
is(q1("SELECT renewed FROM fencing.renew_lease('L', 'h1', $l1, '1 hour')"), 'f', 'renewal of the expired lease refused');
is(q1("SELECT fencing.release_lease('L', 'h2', $l2)"), 't', 'lease released');
q1("SELECT granted FROM fencing.acquire_lease('L', 'h3', '1 hour')");

is( q1(q{SELECT rejected_stale, rejected_missing, rejected_not_issued, rejected_conflict,
			skipped, bypassed, terms_issued, lease_grants, lease_renewals_refused, lease_expiries,
			mark = latest_term, flapping
		FROM fencing.scope_stats WHERE scope = 'tele'}),
	"3|1|1|1|2|2|2|0|0|0|t|f", 'counters of scope tele');
is( q1(q{SELECT rejected_stale, rejected_missing, skipped, terms_issued, lease_grants,
			lease_renewals_refused, lease_expiries, lease_holder, lease_live, lease_fenced
		FROM fencing.scope_stats WHERE scope = 'L'}),
	"0|0|0|3|3|1|1|h3|t|f", 'counters of scope L');
is( q1(q{SELECT relation, rejected_stale, rejected_missing, rejected_not_issued, rejected_conflict,
			skipped, bypassed
		FROM fencing.table_stats ORDER BY relation::text COLLATE "C"}),
	"per_row|1|0|0|0|0|0\nsk|0|0|0|0|2|0\nt|3|1|1|1|0|2", 'counters per table');

my $tok_mark = "$t1|$t2";
is( q1(q{SELECT kind, sqlstate, relation, token, mark, declared, role, application_name, client
		FROM fencing.last_rejections WHERE by = 'scope' AND scope = 'tele' ORDER BY kind COLLATE "C"}),
	join("\n",
		"conflict|ZF005|t|77||$t2|app|worker-E|[local]",
		"missing|ZF002|t||||app|worker-C|[local]",
		"not_issued|ZF003|t|999|||app|worker-D|[local]",
		"skipped|ZF001|sk|$t1|$t2||app|worker-F|[local]",
		"stale|ZF001|t|$t1|$t2||app|worker-B|[local]"),
	'last occurrence of each kind in scope tele');
is( q1(q{SELECT kind, scope IS NULL, token, mark, application_name
		FROM fencing.last_rejections WHERE by = 'table' AND relation = 'per_row'::regclass}),
	"stale|t|4|5|worker-G", 'last occurrence on a per-row table');
is( q1(q{SELECT count(*) FROM fencing.last_rejections
		WHERE occurred_at IS NULL OR occurred_at > now() OR occurred_at < now() - interval '5 min'}),
	'0', 'occurrences carry their time');

# log lines: one per rejection, with the SQLSTATE in the text
my $log = slurp_file($node->logfile, $logpos);
my @stale = ($log =~ /LOG:  fencing rejected a stale write \(ZF001\) to relation "t": scope "tele", token $t1, mark $t2, role "app", application "worker-A", client \[local\]/g);
is(scalar @stale, 2, 'each stale rejection of worker-A logged once');
my @forged = ($log =~ /fencing rejected a token that was not issued \(ZF003\) to relation "t": scope "tele", token 999/g);
is(scalar @forged, 1, 'the ZF003 rejection logged once');
my @skips = ($log =~ /LOG:  fencing skipped a stale write \(ZF001\) to relation "sk"/g);
is(scalar @skips, 2, 'each skipped row logged once');

# pg_monitor reads every view
is( $node->safe_psql($db, q{SELECT count(*) FROM fencing.scope_stats WHERE rejected_stale IS NOT NULL},
		extra_params => ['-U', 'monitor']),
	'2', 'a pg_monitor member reads scope_stats');
is( $node->safe_psql($db, q{SELECT count(*) > 0 FROM fencing.last_rejections},
		extra_params => ['-U', 'monitor']),
	't', 'a pg_monitor member reads last_rejections');

# no lost increments: 8 clients x 200 transactions, each rejected (and the
# rejection caught, so that pgbench goes on)
q1(q{
	CREATE TABLE pb (id int PRIMARY KEY, v int, tok bigint);
	SELECT fencing.protect('pb', 'tok', scope => 'pgbench');
});
my $p1 = q1("SELECT fencing.fence_next_epoch('pgbench')");
q1("INSERT INTO pb VALUES (1, 0, $p1)");
q1("SELECT fencing.fence_next_epoch('pgbench')");
my $script = $node->basedir . '/stale.sql';
open(my $fh, '>', $script) or die $!;
print $fh "SET fencing.log_rejections = off;\n";
print $fh "DO \$\$ BEGIN UPDATE pb SET v = v + 1, tok = $p1 WHERE id = 1; "
  . "EXCEPTION WHEN SQLSTATE 'ZF001' THEN NULL; END \$\$;\n";
close $fh;
command_ok(
	[ 'pgbench', '-n', '-c', '8', '-j', '8', '-t', '200', '-f', $script,
		'-h', $node->host, '-p', $node->port, $db ],
	'pgbench: 8 clients, 200 rejected transactions each');
is(q1("SELECT rejected_stale FROM fencing.scope_stats WHERE scope = 'pgbench'"), '1600', 'no lost increments (1600)');
is(q1("SELECT rejected_stale FROM fencing.table_stats WHERE relation = 'pb'::regclass"), '1600', 'no lost increments per table');
is(q1("SELECT v FROM pb"), '0', 'no stale write got through');

# reset: counters from 0, last occurrences gone
q1("SELECT fencing.stats_reset()");
is( q1(q{SELECT rejected_stale, skipped, terms_issued FROM fencing.scope_stats WHERE scope = 'tele'}),
	'0|0|0', 'counters are 0 after stats_reset()');
is(q1("SELECT count(*) FROM fencing.last_rejections"), '0', 'no last occurrences after stats_reset()');
session('worker-Z', "UPDATE t SET v = 'z', tok = $t1 WHERE id = 1");
is(q1("SELECT rejected_stale FROM fencing.scope_stats WHERE scope = 'tele'"), '1', 'counting resumes after stats_reset()');

$node->stop;
done_testing();
