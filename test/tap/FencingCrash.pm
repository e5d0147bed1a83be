# FencingCrash.pm: helpers shared by the fencing TAP tests (test/tap/*.pl).
#
# A crash only loses what was not yet written out of the WAL buffers.  With
# synchronous_commit = off the WAL writer would write an async commit to the
# kernel within milliseconds, and an immediate stop does not lose the
# kernel's page cache, so a crash test of "durable whatever the session set"
# would pass even if nothing forced a flush.  freeze_walwriter() stops the WAL
# writer (SIGSTOP) so that unflushed WAL really stays in shared memory until
# the crash throws it away; the clusters run without autovacuum, background
# writer and timed checkpoints, so nothing else flushes WAL behind the test's
# back.  Each test proves the window is real with a control: an async commit
# made in it is lost.
package FencingCrash;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT =
  qw(fencing_node freeze_walwriter crash_immediate crash_kill quit_dead
  sqlstate_error streaming_standby cut_off term);

# A started cluster with the extension created in database "postgres".
sub fencing_node
{
	my ($name, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf(
		'postgresql.conf', join("\n",
			'autovacuum = off',
			'bgwriter_lru_maxpages = 0',
			'checkpoint_timeout = 1h',
			'max_wal_size = 1GB',
			'restart_after_crash = on',
			@conf));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION fencing');
	return $node;
}

# Stop the WAL writer; returns its pid (for crash_immediate / crash_kill).
sub freeze_walwriter
{
	my ($node) = @_;
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'");
	die "no walwriter found" unless $pid =~ /^\d+$/;
	kill('STOP', $pid) or die "cannot stop walwriter $pid: $!";
	return $pid;
}

# Immediate shutdown and restart.  A frozen WAL writer is killed first: it
# could not act on the shutdown signal, and nothing it holds must reach disk.
sub crash_immediate
{
	my ($node, $frozen_walwriter) = @_;
	kill('KILL', $frozen_walwriter) if defined $frozen_walwriter;
	$node->stop('immediate');
	$node->start;
	return;
}

# SIGKILL the given server processes (backends, a frozen WAL writer) and wait
# for the postmaster's crash recovery (restart_after_crash = on) to finish.
# Returns the server log written meanwhile.
sub crash_kill
{
	my ($node, @pids) = @_;
	my $offset = -s $node->logfile;
	kill('KILL', @pids) == @pids or die "cannot kill @pids: $!";
	$node->wait_for_log(qr/all server processes terminated; reinitializing/,
		$offset);
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "cluster did not come back after crash";
	return slurp_file($node->logfile, $offset);
}

# Close a background psql whose backend died in a crash (psql may be gone).
sub quit_dead
{
	my ($session) = @_;
	eval { $session->quit; };
	return;
}

# Run SQL that must fail; returns its SQLSTATE (undef if it did not fail).
sub sqlstate_error
{
	my ($node, $db, $sql) = @_;
	my ($ret, $stdout, $stderr) = $node->psql($db,
		"\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	return undef if $ret == 0;
	return $stderr =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1 : "unknown: $stderr";
}

# A streaming standby of $primary made from a new base backup, started and
# caught up; @conf: lines for its postgresql.conf.
sub streaming_standby
{
	my ($primary, $name, @conf) = @_;
	$primary->backup("bk_$name");
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, "bk_$name", has_streaming => 1);
	$standby->append_conf('postgresql.conf', join("\n", @conf) . "\n") if @conf;
	$standby->start;
	$primary->wait_for_catchup($standby);
	return $standby;
}

# Stop a standby's streaming: it keeps what it replayed and receives nothing more.
sub cut_off
{
	my ($standby) = @_;
	$standby->append_conf('postgresql.conf', "primary_conninfo = ''\n");
	$standby->reload;
	$standby->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
	  or die 'WAL receiver did not stop';
	return;
}

# The next term of scope on node (database "postgres"), holder "h".
sub term
{
	my ($node, $scope) = @_;
	return $node->safe_psql('postgres', "SELECT fencing.fence_next_epoch('$scope', 'h')");
}

1;
