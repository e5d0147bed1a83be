# 003_marks_durable.pl: invariant I2 (the mark only rises) across an
# immediate stop and across pg_dump/restore.
#
# Proves that
#   - marks raised by fence_next_epoch() and by writes carrying a higher
#     external token (as a token column value or with fencing.use_token()),
#     made by a session with synchronous_commit = off while the WAL writer is
#     frozen, survive "pg_ctl stop -m immediate" and a restart, together with
#     the write that raised them; a later async commit in the same window is
#     lost (control), so the survival is owed to the extension;
#   - after the restart the old tokens are still rejected with SQLSTATE ZF001
#     and the next epoch is above the mark external tokens set;
#   - pg_dump (custom format with pg_restore, and plain SQL with psql) into a
#     fresh database keeps fencing.scopes, fencing.terms and the clock: the
#     next epoch after the restore is above every old epoch and above the
#     mark of its scope (also one external tokens pushed ahead), in a band
#     of a moved clock generation (another database, 1.5), and the
#     protected tables' triggers still reject stale and tokenless writes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('marks_durable');
my $db   = 'postgres';

sub q1 { return $node->safe_psql($_[0], $_[1]); }

sub mark
{
	my ($dbname, $scope) = @_;
	return q1($dbname,
		"SELECT mark FROM fencing.scopes WHERE scope = '$scope'");
}

$node->safe_psql(
	$db, q{
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	-- writes raise this scope's mark with tokens of their own (1.2: 'issued' by default)
	SELECT fencing.create_scope('jobs', tokens => 'external');
	SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
	CREATE TABLE ext (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('ext', 'tok', scope => 'ext');
	CREATE TABLE rows_only (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('rows_only', 'tok');
	CREATE TABLE plain (n int);
});

# Durable starting state (synchronous_commit = on).
my $e0 = q1($db, "SELECT fencing.fence_next_epoch('jobs', 'leader-0')");
q1($db, "INSERT INTO jobs VALUES (1, $e0, 'one'), (2, $e0, 'two')");
q1($db, "INSERT INTO ext VALUES (1, 100, 'x')");
q1($db, "INSERT INTO rows_only VALUES (1, 5, 'r')");

# --- Raise every kind of mark from an async session, then crash.
my $ww = freeze_walwriter($node);
my $w  = $node->background_psql($db);
$w->query_safe('SET synchronous_commit = off');
my $e1 = $w->query_safe("SELECT fencing.fence_next_epoch('jobs', 'leader-1')");
cmp_ok($e1, '>', $e0, 'fence_next_epoch raised the clock');
my $ext_tok = 1000;
$w->query_safe("INSERT INTO ext VALUES (2, $ext_tok, 'y')");    # token column
my $jobs_tok = $e1 + 500;
$w->query_safe(
	"BEGIN; SELECT fencing.use_token('jobs', $jobs_tok); UPDATE jobs SET v = 'raised' WHERE id = 1; COMMIT"
);    # declared token
$w->query_safe('INSERT INTO plain VALUES (1)');                 # control
$w->quit;

crash_immediate($node, $ww);

is(q1($db, 'SELECT count(*) FROM plain'),
	'0', 'control: the crash lost the async commit made after the raises');
is(mark($db, 'ext'), $ext_tok,
	'mark raised by a token column value survived the immediate stop');
is(mark($db, 'jobs'), $jobs_tok,
	'mark raised by a declared token survived the immediate stop');
is(q1($db, 'SELECT tok || v FROM jobs WHERE id = 1'),
	"${jobs_tok}raised", 'the write that raised the mark survived with it');
is(q1($db, "SELECT epoch || ' ' || holder FROM fencing.scopes WHERE scope = 'jobs'"),
	"$e1 leader-1", 'the term issued by the async session survived');

is( sqlstate_error(
		$node, $db,
		"BEGIN; SELECT fencing.use_token('jobs', $e1); UPDATE jobs SET v = 'stale' WHERE id = 2; COMMIT;"
	),
	'ZF001',
	'after restart, the previous term is rejected (ZF001)');
is(sqlstate_error($node, $db, "INSERT INTO jobs VALUES (3, $e0, 'stale')"),
	'ZF001', 'after restart, an older term is rejected (ZF001)');
is(sqlstate_error($node, $db, "INSERT INTO ext VALUES (3, 999, 'stale')"),
	'ZF001', 'after restart, a lower external token is rejected (ZF001)');
is(q1($db, "SELECT v FROM jobs WHERE id = 2"), 'two',
	'the rejected write changed nothing');
is(mark($db, 'jobs'), $jobs_tok, 'the rejected writes left the mark alone');

q1($db, "INSERT INTO ext VALUES (4, $ext_tok, 'same term')");
is(q1($db, 'SELECT count(*) FROM ext WHERE id = 4'),
	'1', 'after restart, a write with the mark itself is accepted');
my $e2 = q1($db, "SELECT fencing.fence_next_epoch('jobs', 'leader-2')");
cmp_ok($e2, '>', $jobs_tok,
	'after restart, the next epoch is above the mark external tokens set');

# --- pg_dump and restore into fresh databases.
q1($db, "INSERT INTO jobs VALUES (5, $e2, 'five')");
q1($db, "UPDATE rows_only SET tok = 10 WHERE id = 1");
q1($db, "SELECT fencing.fence_next_epoch('other', 'leader-o')");

my $scopes_sql = 'SELECT * FROM fencing.scopes ORDER BY scope COLLATE "C"';
my $terms_sql  = 'SELECT * FROM fencing.terms ORDER BY epoch';
my $seq_sql    = 'SELECT last_value, is_called FROM fencing.epoch_seq';
my $data_sql =
  'SELECT * FROM jobs ORDER BY id; SELECT * FROM ext ORDER BY id; SELECT * FROM rows_only';
my $prot_sql   = 'SELECT * FROM fencing.protected_tables ORDER BY relation::text COLLATE "C"';
my %before = map { $_ => q1($db, $_) }
  ($scopes_sql, $terms_sql, $seq_sql, $data_sql, $prot_sql);
my $max_epoch = q1($db, 'SELECT max(epoch) FROM fencing.terms');

my $dir = PostgreSQL::Test::Utils::tempdir();
my %format = (custom => "$dir/fencing.dump", plain => "$dir/fencing.sql");
for my $fmt (sort keys %format)
{
	my $file   = $format{$fmt};
	my $target = "restored_$fmt";
	$node->command_ok(
		[
			'pg_dump', $fmt eq 'custom' ? '-Fc' : '-Fp',
			'-f', $file, '-d', $node->connstr($db)
		],
		"pg_dump ($fmt)");
	q1($db, "CREATE DATABASE $target");
	$node->command_ok(
		$fmt eq 'custom'
		? [ 'pg_restore', '--exit-on-error', '-d', $node->connstr($target), $file ]
		: [
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr($target), '-f', $file
		],
		"restore ($fmt) into a fresh database");

	is(q1($target, $scopes_sql), $before{$scopes_sql},
		"$fmt: fencing.scopes (marks, terms, holders) restored unchanged");
	is(q1($target, $terms_sql), $before{$terms_sql},
		"$fmt: fencing.terms restored unchanged");
	is(q1($target, $seq_sql), $before{$seq_sql},
		"$fmt: the clock's position restored unchanged");
	is(q1($target, $data_sql), $before{$data_sql},
		"$fmt: protected table data and row tokens restored");
	is(q1($target, $prot_sql), $before{$prot_sql},
		"$fmt: the protected tables are still protected");

	is(sqlstate_error($node, $target, "INSERT INTO jobs VALUES (6, $e1, 'stale')"),
		'ZF001', "$fmt: an old term is rejected after restore (ZF001)");
	is(sqlstate_error($node, $target, "INSERT INTO ext VALUES (6, 999, 'stale')"),
		'ZF001', "$fmt: a lower external token is rejected after restore (ZF001)");
	is(sqlstate_error($node, $target, "UPDATE jobs SET v = 'no token' WHERE id = 5"),
		'ZF002', "$fmt: a tokenless write is rejected after restore (ZF002)");
	is( sqlstate_error(
			$node, $target, "UPDATE rows_only SET tok = 7 WHERE id = 1"),
		'ZF001',
		"$fmt: a token below the row's token is rejected after restore (ZF001)");

	my $next = q1($target, "SELECT fencing.fence_next_epoch('jobs', 'after-restore')");
	cmp_ok($next, '>', $max_epoch,
		"$fmt: the next epoch after restore ($next) is above every old epoch ($max_epoch)");
	my $next_ext = q1($target, "SELECT fencing.fence_next_epoch('ext')");
	cmp_ok($next_ext, '>', $ext_tok,
		"$fmt: the next epoch of a scope external tokens pushed ahead is above its mark");
	# 1.5: a restore into a new database moves the clock's generation, so
	# the first terms of both scopes are the new band's floor (terms are per
	# scope; before 1.5 the external mark put 'ext' above 'jobs' here)
	is(q1($target, 'SELECT reason FROM fencing.clock_state()'), 'new database',
		"$fmt: the restore into a new database moved the clock's generation");
	cmp_ok($next, '>=', 2**40, "$fmt: the next epoch is in a band above every band used before");
	q1($target, "INSERT INTO jobs VALUES (6, $next, 'new leader')");
	is(sqlstate_error($node, $target, "INSERT INTO jobs VALUES (7, $e2, 'old leader')"),
		'ZF001', "$fmt: the new term fences the last term from before the dump");
	is(mark($target, 'jobs'), $next, "$fmt: the new term is the mark");
}

$node->stop;
done_testing();
