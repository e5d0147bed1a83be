# 010_stats_rights.pl: who a rejection is counted for,
# with fencing in shared_preload_libraries (sql/72_stats_rights.sql shows
# the same from the log lines, without the counters).
#
# Proves that
#   - a stranger's refused writes (ZF002, ZF005) on its own scope-column
#     table, or through a trigger made by hand, naming another tenant's
#     scope, change neither that scope's counters nor its last rejections
#     (no forged role or application_name); they count for the stranger's
#     table;
#   - junk lease calls (renew_lease/release_lease of scopes that do not
#     exist) by a role with no privilege, and rows naming junk scopes, add
#     no entry; the tenant's rejections go on being counted;
#   - takeover()'s ZF001 is counted, and its ZF001 and ZF003 name no table
#     (not the table the session wrote last); a table write's ZF003 names it;
#   - a role holds at most fencing.stats_max_per_role entries (its own
#     tables and scopes), so it cannot use up the table; superusers' are not
#     bounded; when the table is full, existing entries still count;
#   - stats_reset() gives each role its share back.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('stats_rights', "shared_preload_libraries = 'fencing'",
	'fencing.stats_max = 100', 'fencing.stats_max_per_role = 10',
	'fencing.log_rejections = off', 'fencing.log_skips = off');
my $db = 'postgres';

sub q1 { return $node->safe_psql($db, $_[0]); }

# One session of $role named $app; returns psql's stderr (the errors).
sub as
{
	my ($role, $app, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db,
		"SET ROLE $role; SET application_name = '$app';\n$sql",
		on_error_stop => 0);
	return $err;
}

q1(q{
	CREATE ROLE victim;
	CREATE ROLE stranger;
	CREATE ROLE nobody;
	CREATE SCHEMA victim AUTHORIZATION victim;
	CREATE SCHEMA stranger AUTHORIZATION stranger;
	GRANT EXECUTE ON FUNCTION fencing.create_scope(text, text, regrole) TO victim;
});
as('victim', 'setup', q{
	SELECT fencing.create_scope('victim-scope');
	CREATE TABLE victim.t (id int PRIMARY KEY, v text, tok bigint);
	SELECT fencing.protect('victim.t', 'tok', scope => 'victim-scope');
});
my $t1 = q1("SET ROLE victim; SELECT fencing.fence_next_epoch('victim-scope', 'leader-1')");
as('victim', 'setup', "INSERT INTO victim.t VALUES (1, 'one', $t1)");
my $t2 = q1("SET ROLE victim; SELECT fencing.fence_next_epoch('victim-scope', 'leader-2')");

sub victim_counts
{
	return q1(q{SELECT rejected_stale, rejected_missing, rejected_not_issued, rejected_conflict
		FROM fencing.scope_stats WHERE scope = 'victim-scope'});
}
sub victim_last
{
	return q1(q{SELECT kind, relation, role, application_name FROM fencing.last_rejections
		WHERE by = 'scope' AND scope = 'victim-scope' ORDER BY kind COLLATE "C"});
}
sub table_counts
{
	my ($rel) = @_;
	return q1(qq{SELECT rejected_stale, rejected_missing, rejected_not_issued, rejected_conflict
		FROM fencing.table_counters() WHERE relation = '$rel'::regclass});
}
sub info { return q1("SELECT entries, untracked FROM fencing.stats_info()"); }

# 1. the victim's own rejection counts under its scope
like(as('victim', 'victim-app', "UPDATE victim.t SET v = 'x' WHERE id = 1"), qr/missing fencing token/,
	'victim: write without a token rejected');
is(victim_counts(), '0|1|0|0', 'victim: its ZF002 counted under its scope');
is(victim_last(), 'missing|victim.t|victim|victim-app', 'victim: its last rejection');

# 2. a stranger's rows naming the victim's scope, in its own table
as('stranger', 'setup', q{
	CREATE TABLE stranger.rows (id int, scope text, tok bigint);
	SELECT fencing.protect('stranger.rows', 'tok', scope_column => 'scope');
	CREATE TABLE stranger.hand (id int, tok bigint);
});
# the stranger protected a table of its own, so it may execute the fence
# (1.5: protect() creates the fence's triggers as the table's owner) and
# binds its own table to the victim's scope by hand; the fence checks the
# table owner's right to the scope at each write (below)
unlike(as('stranger', 'setup', q{
	CREATE TRIGGER hand BEFORE INSERT OR UPDATE OR DELETE ON stranger.hand
	  FOR EACH ROW EXECUTE FUNCTION fencing.fence_trigger('tok', 'error', 'scope', 'victim-scope');
}), qr/ERROR/, 'stranger: makes a fence trigger of its own table by hand');
for my $i (1 .. 3)
{
	like(as('stranger', 'forger', "INSERT INTO stranger.rows (id, scope) VALUES ($i, 'victim-scope')"),
		qr/missing fencing token/, "stranger: ZF002 naming the victim's scope ($i)");
}
for my $i (1 .. 2)
{
	like(as('stranger', 'forger',
			"BEGIN; SELECT fencing.use_token('victim-scope', 5); INSERT INTO stranger.rows VALUES ($i, 'victim-scope', 6);"),
		qr/disagrees with the declared token/, "stranger: ZF005 naming the victim's scope ($i)");
}
like(as('stranger', 'forger', "INSERT INTO stranger.hand (id) VALUES (1)"), qr/permission denied for fencing scope/,
	'stranger: a trigger made by hand naming the victim\'s scope is refused before anything is counted');
is(victim_counts(), '0|1|0|0', "stranger's rejections did not change the victim's counters");
is(victim_last(), 'missing|victim.t|victim|victim-app', "stranger's rejections did not rewrite the victim's last rejection");
is(table_counts('stranger.rows'), '0|3|0|2', "stranger's rejections count for its own table");

# 3. takeover(): ZF001 counted, ZF001 and ZF003 name no table, even right
# after the session wrote one
like(as('victim', 'taker', "UPDATE victim.t SET v = 'x' WHERE id = 1; SELECT fencing.takeover('victim-scope', $t2 + 100);"),
	qr/was not issued/, 'takeover: ZF003');
like(as('victim', 'taker', "UPDATE victim.t SET v = 'x' WHERE id = 1; SELECT fencing.takeover('victim-scope', $t1);"),
	qr/stale fencing token for scope/, 'takeover: ZF001');
is(victim_counts(), '1|3|1|0', "takeover's ZF001 and ZF003 counted under the scope");
is( q1(q{SELECT kind, relation IS NULL, role, application_name FROM fencing.last_rejections
		WHERE by = 'scope' AND scope = 'victim-scope' AND kind IN ('stale', 'not_issued') ORDER BY kind COLLATE "C"}),
	"not_issued|t|victim|taker\nstale|t|victim|taker", "takeover's rejections name no table");
is(table_counts('victim.t'), '0|3|0|0', "takeover's rejections are not the table's");
like(as('victim', 'writer', "UPDATE victim.t SET v = 'x', tok = $t2 + 100 WHERE id = 1"), qr/was not issued/,
	'a table write: ZF003');
is(table_counts('victim.t'), '0|3|1|0', "a table write's ZF003 counts for its table");
is( q1(q{SELECT relation FROM fencing.last_rejections
		WHERE by = 'scope' AND scope = 'victim-scope' AND kind = 'not_issued'}),
	'victim.t', "a table write's ZF003 names its table");

# 4. junk: lease calls of scopes that do not exist, by a role with no
# privilege, and rows naming junk scopes
my $before = info();
as('nobody', 'junk', q{
	SELECT count(*) FROM generate_series(1, 300) i,
	  LATERAL fencing.renew_lease('junk-' || i, 'h', 1, '1 minute');
	SELECT count(*) FROM generate_series(1, 300) i,
	  LATERAL fencing.release_lease('junk-' || i, 'h', 1);
});
as('stranger', 'junk', q{
	DO $$ BEGIN
	  FOR i IN 1 .. 300 LOOP
	    BEGIN
	      INSERT INTO stranger.rows (id, scope) VALUES (i, 'junk-' || i);
	    EXCEPTION WHEN SQLSTATE 'ZF002' THEN NULL;
	    END;
	  END LOOP;
	END $$;
});
is(info(), $before, 'junk lease calls and junk scopes add no entry and lose nothing');
is(q1("SELECT count(*) FROM fencing.scope_counters() WHERE scope LIKE 'junk%'"), '0', 'no junk scope is counted');
is(table_counts('stranger.rows'), '0|303|0|2', 'rows naming junk scopes count for their table');
as('victim', 'victim-app', "UPDATE victim.t SET v = 'x' WHERE id = 1");
is(victim_counts(), '1|4|2|0', "the victim's rejections are still counted");

# 5. a role's share: the stranger's own tables take at most 10 entries
my ($entries0, $untracked0) = split /\|/, info();
as('stranger', 'filler', q{
	DO $$ BEGIN
	  FOR i IN 1 .. 30 LOOP
	    EXECUTE format('CREATE TABLE stranger.p%s (id int, tok bigint)', i);
	    PERFORM fencing.protect(format('stranger.p%s', i)::regclass, 'tok');
	    BEGIN
	      EXECUTE format('INSERT INTO stranger.p%s (id) VALUES (1)', i);
	    EXCEPTION WHEN SQLSTATE 'ZF002' THEN NULL;
	    END;
	  END LOOP;
	END $$;
});
is( q1(q{SELECT count(*) FROM fencing.table_counters() t JOIN pg_class c ON c.oid = t.relation
		WHERE c.relowner = 'stranger'::regrole}),
	'10', 'the stranger holds fencing.stats_max_per_role (10) entries');
my ($entries1, $untracked1) = split /\|/, info();
is($entries1 - $entries0, 9, 'nine more entries: the stranger had one (its refused hand-made trigger counted nothing)');
is($untracked1 - $untracked0, 21, 'the other 21 rejections are not tracked');
as('victim', 'setup', q{
	CREATE TABLE victim.t2 (id int, tok bigint);
	SELECT fencing.protect('victim.t2', 'tok', scope => 'victim-scope');
});
as('victim', 'victim-app', "INSERT INTO victim.t2 (id) VALUES (1)");
is(table_counts('victim.t2'), '0|1|0|0', "the victim's new table still gets an entry");

# 6. a full table: existing entries count, new ones are not tracked
# (superusers' tables are not bounded)
my ($entries2) = split /\|/, info();
my $fill = 100 - $entries2;
q1(qq{
	DO \$\$ BEGIN
	  FOR i IN 1 .. $fill LOOP
	    EXECUTE format('CREATE TABLE su_%s (id int, tok bigint)', i);
	    PERFORM fencing.protect(format('su_%s', i)::regclass, 'tok');
	    BEGIN
	      EXECUTE format('INSERT INTO su_%s (id) VALUES (1)', i);
	    EXCEPTION WHEN SQLSTATE 'ZF002' THEN NULL;
	    END;
	  END LOOP;
	END \$\$;
});
is((split /\|/, info())[0], '100', 'the table is full (superusers are not bounded)');
as('victim', 'setup', q{
	CREATE TABLE victim.t3 (id int, tok bigint);
	SELECT fencing.protect('victim.t3', 'tok', scope => 'victim-scope');
});
as('victim', 'victim-app', "INSERT INTO victim.t3 (id) VALUES (1)");
is(table_counts('victim.t3'), '', 'a new table gets no entry in a full table');
is(victim_counts(), '1|6|2|0', 'the scope, already there, still counts (t2 and t3 counted)');

# 7. stats_reset() gives the shares back
q1("SELECT fencing.stats_reset()");
as('stranger', 'filler', q{
	DO $$ BEGIN
	  FOR i IN 1 .. 12 LOOP
	    BEGIN
	      EXECUTE format('INSERT INTO stranger.p%s (id) VALUES (1)', i);
	    EXCEPTION WHEN SQLSTATE 'ZF002' THEN NULL;
	    END;
	  END LOOP;
	END $$;
});
is( q1(q{SELECT count(*) FROM fencing.table_counters() t JOIN pg_class c ON c.oid = t.relation
		WHERE c.relowner = 'stranger'::regrole}),
	'10', 'after stats_reset() the stranger has its 10 entries again');

$node->stop;
done_testing();
