# 009_preload.pl: the statement that fired the fence, with and without
# shared_preload_libraries (issue 14, items 1 and 2).
#
# Proves that, each case as a session's first statement (the library loads
# in the middle of it, or was preloaded):
#   - preloaded: a tokenless MERGE whose running UPDATE action does not
#     assign the token column is ZF002 whether nested in DO, CALL, EXPLAIN
#     ANALYZE or a function called from an UPDATE of the same table; an
#     upsert writing no row raises no mark; the leader's own partition move
#     nested in DO is accepted; fencing.health has no "library not
#     preloaded" finding and CREATE EXTENSION says nothing;
#   - not preloaded: the same MERGEs are refused with 55000 (never
#     accepted), the upsert still raises no mark, the leader's nested move
#     keeping its token is refused with 55000 and accepted on retry;
#     fencing.health reports "library not preloaded" and CREATE EXTENSION
#     says so (NOTICE).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $setup = q{
	SELECT fencing.create_scope('pl', tokens => 'external');
	CREATE TABLE m (id int PRIMARY KEY, v text, tok bigint);
	SELECT fencing.protect('m', 'tok', scope => 'pl');
	CREATE TABLE pm (id int, part int, v text, tok bigint, PRIMARY KEY (id, part)) PARTITION BY LIST (part);
	CREATE TABLE pm1 PARTITION OF pm FOR VALUES IN (1);
	CREATE TABLE pm2 PARTITION OF pm FOR VALUES IN (2);
	SELECT fencing.protect('pm', 'tok', scope => 'pl');
	INSERT INTO m VALUES (1, 'leader', 5), (2, 'leader', 5);
	INSERT INTO pm VALUES (1, 1, 'leader', 5);
	CREATE FUNCTION zmerge() RETURNS boolean LANGUAGE plpgsql AS $$
	BEGIN
	  MERGE INTO m USING (VALUES (1)) s(id) ON m.id = s.id
	    WHEN MATCHED AND false THEN UPDATE SET tok = 99
	    WHEN MATCHED THEN UPDATE SET v = 'zombie';
	  RETURN true;
	END $$;
	CREATE PROCEDURE zmerge_proc() LANGUAGE plpgsql AS $$ BEGIN PERFORM zmerge(); END $$;
};

my %nested = (
	'DO'              => q{DO $$ BEGIN PERFORM zmerge(); END $$},
	'CALL'            => q{CALL zmerge_proc()},
	'EXPLAIN ANALYZE' => q{EXPLAIN (ANALYZE, COSTS OFF) MERGE INTO m USING (VALUES (1)) s(id) ON m.id = s.id
	                         WHEN MATCHED AND false THEN UPDATE SET tok = 99
	                         WHEN MATCHED THEN UPDATE SET v = 'zombie'},
	'UPDATE m WHERE f()' => q{UPDATE m SET v = 'outer' WHERE id = 2 AND zmerge()});

for my $preload (1, 0)
{
	my $name = $preload ? 'preloaded' : 'not_preloaded';
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'fencing'") if $preload;
	$node->start;
	my ($ret, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION fencing');
	is($ret, 0, "$name: CREATE EXTENSION");
	if ($preload)
	{
		unlike($err, qr/WARNING|NOTICE/, "$name: CREATE EXTENSION says nothing");
	}
	else
	{
		like($err, qr/WARNING:  fencing is not in shared_preload_libraries/,
			"$name: CREATE EXTENSION says the library is not preloaded");
	}
	is($node->safe_psql('postgres',
			q{SELECT count(*) FROM fencing.health WHERE "check" = 'library not preloaded'}),
		$preload ? 0 : 1, "$name: fencing.health reports the library not preloaded or not");
	$node->safe_psql('postgres', $setup);

	# each psql is a new session: the case is its first statement
	for my $how (sort keys %nested)
	{
		is(sqlstate_error($node, 'postgres', $nested{$how}),
			$preload ? 'ZF002' : '55000',
			"$name: tokenless MERGE nested in $how, first statement: "
			  . ($preload ? 'ZF002' : 'refused with 55000'));
	}
	is($node->safe_psql('postgres', 'SELECT string_agg(v, \',\' ORDER BY id) FROM m'),
		'leader,leader', "$name: no zombie write committed");

	# an upsert writing no row raises no mark
	$node->safe_psql('postgres',
		q{DO $$ BEGIN INSERT INTO m VALUES (1, 'dn', 9) ON CONFLICT DO NOTHING; END $$});
	is($node->safe_psql('postgres', q{SELECT mark FROM fencing.scopes WHERE scope = 'pl'}),
		'5', "$name: ON CONFLICT DO NOTHING writing no row, first statement in DO, raises no mark");
	$node->safe_psql('postgres', q{UPDATE m SET v = 'leader again', tok = 5 WHERE id = 1});

	# the leader's own partition move, nested, keeping its token
	my $move = q{DO $$ BEGIN UPDATE pm SET part = 2, tok = 5 WHERE id = 1; END $$};
	if ($preload)
	{
		is(sqlstate_error($node, 'postgres', $move), undef,
			"$name: the leader's nested partition move is accepted");
	}
	else
	{
		is(sqlstate_error($node, 'postgres', $move), '55000',
			"$name: the leader's nested partition move is refused with 55000, not ZF002");
		# a session with the library loaded (the retry) judges it
		$node->safe_psql('postgres', "LOAD 'fencing';\n$move");
	}
	is($node->safe_psql('postgres', 'SELECT part, tok FROM pm'), '2|5',
		"$name: the row moved with its token");
	$node->stop;
}

done_testing();
