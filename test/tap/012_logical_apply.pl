# 012_logical_apply.pl: logical replication into protected tables, whose
# fence triggers fire ALWAYS.
#
# The apply worker runs under session_replication_role = replica.  Proves,
# with a publisher and a subscriber database on one server (no preload):
#   - the fence triggers of the subscriber's tables are enabled ALWAYS, and
#     the initial table copy and the applied INSERT, UPDATE and DELETE pass
#     unchecked for an apply worker applying as a superuser (the rows were
#     judged on the publisher): a fixed scope, and a partitioned table with
#     a scope column; the subscriber's marks are not touched;
#   - an apply worker whose subscription owner is no longer a superuser and
#     does not own the table is refused (42501): the change is not applied;
#   - once that role owns the table (it could switch the fence off anyway),
#     the change is applied.
#   - the subscriber's clock records the tokens the copy brought (an unknown
#     server's claim): its first term is above every term of its source.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('logical_apply');
$node->init(allows_streaming => 'logical');
$node->start;

my $schema = q{
	SET client_min_messages = error;
	CREATE EXTENSION fencing;
	RESET client_min_messages;
	CREATE TABLE j (id int PRIMARY KEY, v text, tok bigint);
	SELECT fencing.protect('j', 'tok', scope => 'jobs');
	CREATE TABLE jp (id int, shard text NOT NULL, v text, tok bigint, PRIMARY KEY (shard, id))
		PARTITION BY LIST (shard);
	CREATE TABLE jp_a PARTITION OF jp FOR VALUES IN ('a');
	SELECT fencing.protect('jp', 'tok', scope_column => 'shard');
};
for my $db ('pubdb', 'subdb')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, $schema);
}
is($node->safe_psql('subdb',
		q{SELECT string_agg(DISTINCT tgenabled::text, ',') FROM pg_trigger
		   WHERE tgfoid = 'fencing.fence_trigger()'::regprocedure}),
	'A', 'every fence trigger of the subscriber fires ALWAYS');

$node->safe_psql('pubdb', q{
	INSERT INTO j VALUES (1, 'initial', 5);
	INSERT INTO jp VALUES (1, 'a', 'initial', 5);
	CREATE PUBLICATION pub FOR TABLE j, jp;
	SELECT pg_create_logical_replication_slot('sub', 'pgoutput');
});
my $connstr = $node->connstr . ' dbname=pubdb';
$node->safe_psql('subdb',
	"CREATE SUBSCRIPTION sub CONNECTION '$connstr' PUBLICATION pub WITH (create_slot = false, slot_name = 'sub')");
$node->wait_for_subscription_sync($node, 'sub', 'subdb');
is($node->safe_psql('subdb', q{SELECT (SELECT string_agg(v || tok, ',') FROM j) || '/' || (SELECT string_agg(v || tok, ',') FROM jp)}),
	'initial5/initial5', 'the initial copy passes the fence');

# the leader writes on the publisher, with its token
$node->safe_psql('pubdb', q{
	UPDATE j SET v = 'updated', tok = 6 WHERE id = 1;
	INSERT INTO j VALUES (2, 'second', 6);
	INSERT INTO jp VALUES (2, 'a', 'second', 6);
	BEGIN;
	SELECT fencing.use_token('a', 6);
	DELETE FROM jp WHERE id = 1;
	COMMIT;
});
$node->wait_for_catchup('sub');
is($node->safe_psql('subdb', q{SELECT string_agg(id || v || tok, ',' ORDER BY id) FROM j}),
	'1updated6,2second6', 'INSERT and UPDATE applied through the fence');
is($node->safe_psql('subdb', q{SELECT string_agg(id || v || tok, ',' ORDER BY id) FROM jp}),
	'2second6', 'INSERT and DELETE applied to the partitioned table');
is($node->safe_psql('subdb', q{SELECT count(*) FROM fencing.scopes}),
	'0', 'the apply raised no mark on the subscriber');

# The copy carried its source's terms; the subscriber's clock knew none of
# them (its own extension, fencing's tables not published): it records them
# as an unknown server's claim, so a subscriber made primary (the cutover of
# a logical-replication upgrade) issues above every term of its source,
# those written after the first copy included.  Its first term was the
# source's first term again before.
my $pub_term = $node->safe_psql('pubdb', q{SELECT fencing.fence_next_epoch('jobs')});
$node->safe_psql('pubdb', "UPDATE j SET tok = $pub_term WHERE id = 2");
$node->wait_for_catchup('sub');
is($node->safe_psql('subdb', 'SELECT state, claimed_system_identifier FROM fencing.clock_state()'),
	'moves|0', 'the subscriber\'s clock records the copied tokens as an unknown server\'s claim');
my $sub_term = $node->safe_psql('subdb', q{SELECT fencing.fence_next_epoch('jobs')});
cmp_ok($sub_term, '>', $pub_term,
	'the subscriber\'s first term is above every term of its source');
# The two tables are copied by two table-synchronization workers, at once
# or one after the other: each copy that finds its tokens above what the
# clock knows claims, and no claim waits for another, so there are one or
# two claims, both in the band of the copied tokens.  The rows applied
# afterwards (tokens 6 and the source's term) claim nothing more.
is($node->safe_psql('subdb', q{
		SELECT (count(*) BETWEEN 1 AND 2) || '|' || count(DISTINCT generation)
		  FROM fencing.clock WHERE system_identifier = 0}),
	'true|1', 'one claim per table copy at most, all in one band: not one per row');

# a subscription owner that is neither a superuser nor the table's owner.
# From PostgreSQL 16 on the apply itself runs as each table's owner (and a
# subscription owned by a role that may not become it does not apply at
# all), so that case cannot arise there: checked on 15 only.
if ($node->safe_psql('subdb', 'SHOW server_version_num') >= 160000)
{
	$node->stop;
	done_testing();
	exit 0;
}
$node->safe_psql('subdb', q{
	CREATE ROLE subowner LOGIN SUPERUSER;
	GRANT SELECT, INSERT, UPDATE, DELETE ON j, jp TO subowner;
	ALTER SUBSCRIPTION sub OWNER TO subowner;
	ALTER ROLE subowner NOSUPERUSER;
});
my $offset = -s $node->logfile;
$node->safe_psql('pubdb', q{UPDATE j SET v = 'by a plain owner', tok = 7 WHERE id = 1});
$node->wait_for_log(
	qr/permission denied to write to protected relation "j" under session_replication_role = replica.*\n.*role "subowner" is neither/,
	$offset);
pass('the apply as a role neither superuser nor owner is refused');
is($node->safe_psql('subdb', q{SELECT v || tok FROM j WHERE id = 1}),
	'updated6', 'the refused change is not applied');

# the table's owner may: it could disable the trigger anyway
$node->safe_psql('subdb', q{ALTER TABLE j OWNER TO subowner});
$node->poll_query_until('subdb', q{SELECT v = 'by a plain owner' FROM j WHERE id = 1})
  or die 'the change was not applied for the table owner';
pass('the apply as the table owner passes');

# back to the bootstrap superuser (named after whoever ran initdb)
$node->safe_psql('subdb', q{ALTER SUBSCRIPTION sub DISABLE; ALTER SUBSCRIPTION sub OWNER TO CURRENT_USER});
$node->stop;
done_testing();
