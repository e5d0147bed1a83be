# A fence made by a superuser's hand with no token in its rows, in a
# database whose clock has issued terms but whose scopes of issued tokens
# are gone (switched to external tokens): the clock has issued terms, so the
# token-less fence must not record an unknown server's claim (the first term
# of a fresh database only moves to a move's floor).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = fencing_node('restored_fence_issued_clock');
sub q1 { my ($db, $sql) = @_; return $node->safe_psql($db, $sql); }

q1('postgres', 'CREATE EXTENSION IF NOT EXISTS fencing');
my $t1 = q1('postgres', "SELECT fencing.fence_next_epoch('jobs')");
my $t2 = q1('postgres', "SELECT fencing.fence_next_epoch('jobs')");
my $before = q1('postgres', 'SELECT state, claimed_system_identifier <> 0 FROM fencing.clock_state()');
q1('postgres', "SELECT fencing.alter_scope_tokens('jobs', 'external')");
my ($ret, $out, $err) = $node->psql('postgres', q{
	CREATE TABLE later (id int, tok bigint);
	CREATE TRIGGER zz_fence_row BEFORE INSERT OR UPDATE ON later FOR EACH ROW
		EXECUTE FUNCTION fencing.fence_trigger('tok')});
diag("notice: $err");
unlike($err, qr/issued no term/, 'no NOTICE claiming the database issued no term');
is(q1('postgres', 'SELECT state, claimed_system_identifier <> 0 FROM fencing.clock_state()'),
	$before, 'the clock keeps its claim: no unknown server recorded');
my $t3 = q1('postgres', "SELECT fencing.fence_next_epoch('other')");
diag("t2=$t2 t3=$t3");
cmp_ok($t3 - $t2, '<', 1000000, 'the next term does not jump to a move\'s floor');
done_testing();
