# 018_shared_marks_database.pl: a database dropped and created again with
# the same OID (CREATE DATABASE ... OID, or the OID counter come round) does
# not inherit the marks the shared memory kept for the dropped one.
#
# Proves that, with fencing preloaded, a database created from a template
# with the extension, whose scope's mark a backend put in shared memory,
# then dropped and created again with the same OID from the same template
# after the template's mark rose (same registry OID, storage and version),
# judges the old leader's token by the new database's mark, not the dropped
# one's; and shows none of the dropped one's counters and rejections
# (fencing.scope_counters(), fencing.last_rejection_events()).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('shared_marks_database', "shared_preload_libraries = 'fencing'",
	'fencing.log_rejections = off');

sub q1 { my ($db, $sql) = @_; return $node->safe_psql($db, $sql); }

sub write_err
{
	my ($db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql, on_error_stop => 0);
	return $err;
}

q1('postgres', 'CREATE DATABASE tmpl');
q1('tmpl', q{
	CREATE EXTENSION fencing;
	CREATE TABLE jobs (id int PRIMARY KEY, shard int NOT NULL, tok bigint, v text);
	SELECT fencing.protect('jobs', 'tok', scope_column => 'shard');
	INSERT INTO jobs VALUES (1, 1, 5, 'new');
});

q1('postgres', 'CREATE DATABASE app TEMPLATE tmpl');
my $oid = q1('postgres', q{SELECT oid FROM pg_database WHERE datname = 'app'});
# two backends write scope 1 at mark 5: the second uses the mark in shared memory
is(write_err('app', q{UPDATE jobs SET v = 'a', tok = 5 WHERE id = 1}), '', 'the leader of term 5 writes');
my $hits = q1('app', 'SELECT hits FROM fencing.shared_marks_info()');
is(write_err('app', q{UPDATE jobs SET v = 'b', tok = 5 WHERE id = 1}), '', 'and again, from another backend');
cmp_ok(q1('app', 'SELECT hits FROM fencing.shared_marks_info()'), '>', $hits,
	'scope 1 of app is kept in shared memory');
like(write_err('app', q{UPDATE jobs SET v = 'c', tok = 4 WHERE id = 1}),
	qr/token 4 is below the scope's mark 5/, 'a stale write to app is refused');
is(q1('app', 'SELECT rejected_stale FROM fencing.scope_counters()'), '1', 'and counted');

# the database is dropped; its template's scope moves on; created again, same OID
q1('postgres', 'DROP DATABASE app');
q1('tmpl', q{SELECT fencing.takeover('1', 7)});
q1('postgres', "CREATE DATABASE app OID $oid TEMPLATE tmpl");
is(q1('app', q{SELECT mark FROM fencing.scopes WHERE scope = '1'}), '7',
	'the database created again has mark 7');
is(q1('app', 'SELECT count(*) FROM fencing.scope_counters()') . '/'
	  . q1('app', 'SELECT count(*) FROM fencing.last_rejection_events()'),
	'0/0', 'it shows no counter or rejection of the dropped database');
like(write_err('app', q{UPDATE jobs SET v = 'stale', tok = 5 WHERE id = 1}),
	qr/token 5 is below the scope's mark 7/,
	'the old token is refused: the dropped database\'s mark in shared memory is not used');
is(q1('app', 'SELECT v FROM jobs WHERE id = 1'), 'new', 'the row is unchanged');

$node->stop;
done_testing();
