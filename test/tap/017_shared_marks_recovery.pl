# 017_shared_marks_recovery.pl: the marks shared in memory (fencing preloaded)
# and the writers registered at them never outlive what they were read from:
# a standby's replay, or an update of the extension.
#
# Proves that
#   - on a hot standby (library preloaded) a read-only call at a scope's
#     mark (a retried takeover() landing there through a pooler) fills no
#     shared mark: after the primary's takeover is replayed (replay fires no
#     trigger, and no backend lives to take in its message) and the standby
#     is promoted, a new backend of the old leader is refused (ZF001).  1.4
#     kept the standby's mark 5 in shared memory, and the write at 5
#     committed after the mark 9 had;
#   - a backend connected across ALTER EXTENSION fencing UPDATE from 1.3,
#     which wrote the scope under 1.3 (and so remembers its 1.3 lock key, the
#     name's hash), writing the scope again while a raise is between the
#     drain of its writers and the update of its row (a batch upsert, whose
#     raise waits for the end of the statement), fills no shared mark with
#     the old mark before it has confirmed its lock: a new backend of the
#     old leader then waits for the raise and is refused.  1.4 filled 5 there
#     and the new backend's write at 5 committed after the raise's 9;
#   - the same for a backend connected across DROP/CREATE EXTENSION, which
#     remembers an id that fencing.scope_ids now hands to another scope.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# --- a standby's read-only call, then its promotion
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', join("\n",
	"autovacuum = off", "shared_preload_libraries = 'fencing'",
	"fencing.shared_marks = 64", "fencing.log_rejections = off"));
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION fencing;
	SELECT fencing.create_scope('jobs', tokens => 'external');
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('jobs', 'tok', scope => 'jobs');
	SELECT fencing.takeover('jobs', 5);
	INSERT INTO jobs VALUES (1, 5, 'leader 5');
	SELECT fencing.create_scope('control', tokens => 'external');
	SELECT fencing.takeover('control', 5);
});
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;
$primary->append_conf('postgresql.conf', "synchronous_standby_names = 'standby'\n");
$primary->reload;
$primary->poll_query_until('postgres',
	"SELECT EXISTS (SELECT 1 FROM pg_stat_replication WHERE application_name = 'standby' AND sync_state = 'sync')")
  or die "standby did not become synchronous";
$primary->wait_for_catchup($standby, 'replay');

# the old leader's retried takeover at its own mark lands on the standby
is($standby->safe_psql('postgres', q{SELECT fencing.takeover('jobs', 5)}), '5',
	'a takeover at the mark runs read-only on the standby');
is($standby->safe_psql('postgres', q{SELECT entries FROM fencing.shared_marks_info()}), '0',
	'and fills no mark shared in memory there');

# the new leader's takeover, replayed by the standby (no backend of it alive)
$primary->safe_psql('postgres', q{SELECT fencing.takeover('jobs', 9); SELECT fencing.takeover('control', 9)});
$primary->wait_for_catchup($standby, 'replay');
$primary->stop('immediate');
$standby->promote;

my ($ret, $out, $err) = $standby->psql('postgres',
	q{BEGIN; UPDATE jobs SET v = 'zombie', tok = 5 WHERE id = 1; COMMIT;});
like($err, qr/token 5 is below the scope's mark 9/,
	'after promotion, a new backend of the old leader is refused');
($ret, $out, $err) = $standby->psql('postgres', q{SELECT fencing.takeover('control', 5)});
like($err, qr/below the scope's mark 9/, 'control: a scope never touched on the standby is refused');
is($standby->safe_psql('postgres', q{SELECT tok, v FROM jobs}), '5|leader 5', 'the row keeps the old leader\'s write');
is($standby->safe_psql('postgres', q{UPDATE jobs SET v = 'leader 9', tok = 9 WHERE id = 1 RETURNING v}),
	'leader 9', 'the new leader writes');
$standby->stop;

# --- a backend connected across ALTER EXTENSION fencing UPDATE from 1.3
my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', join("\n",
	"autovacuum = off", "shared_preload_libraries = 'fencing'",
	"fencing.shared_marks = 64", "fencing.log_rejections = off"));
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION fencing VERSION '1.3';
	CREATE TABLE jobs (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('jobs', 'tok', scope => 's');
	SELECT fencing.create_scope('s', tokens => 'external');
	INSERT INTO jobs VALUES (1, 5, 'seed'), (2, 5, 'seed');
	CREATE FUNCTION hand_wait() RETURNS boolean LANGUAGE plpgsql AS
	  $$ BEGIN PERFORM pg_advisory_xact_lock_shared(4242); RETURN true; END $$;
});

# the pooled backend writes "s" under 1.3, and stays connected
my $old = $node->background_psql('postgres', on_error_stop => 0);
$old->query_safe(q{UPDATE jobs SET v = 'old 1', tok = 5 WHERE id = 1});
$node->safe_psql('postgres', q{ALTER EXTENSION fencing UPDATE});
is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'fencing'}),
	'1.5', 'updated to 1.5');

# B raises "s" to 9 with a batch upsert, held between its drain and its row
# update; meanwhile $old writes "s" again at 5 and a new backend of the old
# leader writes it at 5 too.  Returns whether that backend waited, and the
# rows 1 and 2 once everything ended.
sub raise_window
{
	my ($node, $old) = @_;
	my $blk = $node->background_psql('postgres');
	$blk->query_safe(q{BEGIN; SELECT pg_advisory_xact_lock(4242)});
	my $b = $node->background_psql('postgres');
	$b->query_until(qr/started/, q{\echo started
INSERT INTO jobs SELECT g, 9, 'raise' FROM (VALUES (11), (12)) v(g)
  WHERE g = 11 OR hand_wait() ON CONFLICT (id) DO NOTHING;
});
	$node->poll_query_until('postgres',
		q{SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted AND locktype = 'advisory' AND objid = 4242)})
	  or die "the raise did not reach its window";

	# the old backend writes "s" again at 5, in the window: it waits for the raise
	$old->query_until(qr/started/, q{\echo started
BEGIN;
UPDATE jobs SET v = 'old 2', tok = 5 WHERE id = 1;
});
	$node->poll_query_until('postgres',
		q{SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%old 2%')})
	  or die "the old backend did not wait";

	# a new backend of the old leader, in the window
	my $zombie = $node->background_psql('postgres', on_error_stop => 0);
	my $zpid = $zombie->query_safe('SELECT pg_backend_pid()');
	$zombie->query_until(qr/started/, q{\echo started
BEGIN;
UPDATE jobs SET v = 'zombie', tok = 5 WHERE id = 2;
});
	# wait until its UPDATE either waits for a lock or has ended (1.4 wrote
	# at once): a condition, not a time limit, so a slow machine cannot
	# turn a wait that had not begun yet into "did not wait"
	# (its query is the UPDATE: right after BEGIN it is idle in transaction too)
	$node->poll_query_until('postgres',
		qq{SELECT query LIKE '%zombie%' AND (wait_event_type = 'Lock' OR state LIKE 'idle in transaction%')
		     FROM pg_stat_activity WHERE pid = $zpid})
	  or die "the new backend's write neither waited nor ended";
	my $waits = $node->safe_psql('postgres',
		qq{SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $zpid}) eq 't';

	$blk->query_safe('COMMIT');
	$node->poll_query_until('postgres', q{SELECT mark = 9 FROM fencing.scopes WHERE scope = 's'})
	  or die "the raise did not commit";
	$zombie->query('COMMIT');
	$old->query('COMMIT');
	my $rows = $node->safe_psql('postgres', q{SELECT id, tok, v FROM jobs WHERE id IN (1, 2) ORDER BY id});
	$b->quit;
	$blk->quit;
	$zombie->quit;
	return ($waits, $rows);
}

my ($waits, $rows) = raise_window($node, $old);
ok($waits, 'a new backend of the old leader waits for the raise');
is($rows, "1|5|old 1\n2|5|seed", 'no write at 5 committed after the raise to 9');
is($node->safe_psql('postgres', q{SELECT mark FROM fencing.scopes WHERE scope = 's'}), '9',
	'the mark is 9');
$old->quit;

# --- the same across DROP/CREATE EXTENSION: fencing.scope_ids starts again at 1,
# so the id a live backend remembers for "s" is now another scope's
$old = $node->background_psql('postgres', on_error_stop => 0);
$node->safe_psql('postgres', q{
	SELECT fencing.create_scope('t', tokens => 'external');
	SELECT fencing.takeover('t', 1);
});
$old->query_safe(q{INSERT INTO jobs VALUES (3, 9, 'old, before the drop')});
my $ids_before = $node->safe_psql('postgres', q{SELECT scope, id FROM fencing.scopes ORDER BY scope});
$node->safe_psql('postgres', q{
	DROP EXTENSION fencing CASCADE;
	DELETE FROM jobs WHERE id > 2;
	CREATE EXTENSION fencing;
	SELECT fencing.create_scope('t', tokens => 'external');
	SELECT fencing.create_scope('s', tokens => 'external');
	SELECT fencing.protect('jobs', 'tok', scope => 's');
	SELECT fencing.takeover('s', 5);
});
isnt($node->safe_psql('postgres', q{SELECT scope, id FROM fencing.scopes ORDER BY scope}), $ids_before,
	'after DROP/CREATE EXTENSION the ids are handed out again');
($waits, $rows) = raise_window($node, $old);
ok($waits, 'across DROP/CREATE: a new backend of the old leader waits for the raise');
is($rows, "1|5|old 1\n2|5|seed", 'and no write at 5 committed after the raise to 9');
$old->quit;
$node->stop;

done_testing();
