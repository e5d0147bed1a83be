# 004_row_token_durable.pl: invariant I2 for the per-row mark across an
# immediate stop.
#
# The field guide's glossary makes a row's token column the row's mark, and
# I2 says no operation but a privileged reset ever lowers a row's token and
# that a mark survives a crash.  This proves it for a table fenced per row
# only (no scope, so no scope mark stands behind the row): an UPDATE that
# raises a row's token, committed by a session with synchronous_commit = off,
# survives "pg_ctl stop -m immediate" while the WAL writer is frozen, and a
# writer with a token between the old and the new one is still rejected with
# ZF001 afterwards.  The same is checked for a table fenced by a scope, where
# the write raises the row's token to the scope's current mark (no scope
# raise).  A plain async commit made in the same window is lost (control).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('row_token_durable');
my $db   = 'postgres';

$node->safe_psql(
	$db, q{
	CREATE TABLE rows_only (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('rows_only', 'tok');
	INSERT INTO rows_only VALUES (1, 5, 'old');
	CREATE TABLE scoped (id int PRIMARY KEY, tok bigint, v text);
	SELECT fencing.protect('scoped', 'tok', scope => 's');
	INSERT INTO scoped VALUES (1, 5, 'old');
	INSERT INTO scoped VALUES (2, 10, 'mark');   -- the scope's mark is 10
	CREATE TABLE plain (n int);
});

my $ww = freeze_walwriter($node);
my $w  = $node->background_psql($db);
$w->query_safe('SET synchronous_commit = off');
$w->query_safe("UPDATE rows_only SET tok = 10, v = 'new' WHERE id = 1");
$w->query_safe("UPDATE scoped SET tok = 10, v = 'new' WHERE id = 1");
$w->query_safe('INSERT INTO plain VALUES (1)');    # control
$w->quit;

crash_immediate($node, $ww);

is($node->safe_psql($db, 'SELECT count(*) FROM plain'),
	'0', 'control: the crash lost an async commit');

# A scope's mark stands behind the row: a token between the row's old and
# new token is below the mark whatever happened to the row.
is( sqlstate_error(
		$node, $db, "UPDATE scoped SET tok = 7, v = 'stale' WHERE id = 1"),
	'ZF001',
	'scoped table: a token below the row token it was raised to is rejected after restart');

# No scope: the row's token is the only mark.
is($node->safe_psql($db, 'SELECT tok FROM rows_only WHERE id = 1'),
	'10', "per-row table: the row's raised token survived the immediate stop");
is( sqlstate_error(
		$node, $db, "UPDATE rows_only SET tok = 7, v = 'stale' WHERE id = 1"),
	'ZF001',
	"per-row table: a token below the row's raised token is rejected after restart");

$node->stop;
done_testing();
