# 011_bypass_placeholder.pl: fencing.bypass SET before the library is
# loaded does nothing.
#
# Without shared_preload_libraries a setting SET before the library is
# loaded is a placeholder, which Postgres applies when the library defines
# the setting, in the transaction that loads it.  1.3 stamped it with that
# later transaction, so the bypass acted there: behind a pooler, the next
# client of the connection committed tokenless writes.  Proves, each case in
# a fresh session (the library not loaded yet):
#   - a superuser's session-level SET, then a later transaction's tokenless
#     write (which loads the library): a WARNING, the bypass off (SHOW), the
#     write refused (ZF002) and nothing committed; turned on after the load
#     with SET LOCAL it acts as documented;
#   - the same for a role granted SET on fencing.bypass (it may turn the
#     bypass on, in one transaction, after the load; not before);
#   - SET LOCAL before the load, in the very transaction that writes: also
#     ignored (the bypass must be turned on after the load);
#   - a role without the grant: its placeholder is refused by Postgres at
#     load; its writes are fenced, and it cannot turn the bypass on later;
#   - fencing.bypass from ALTER ROLE ... SET does nothing, loaded or not.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use FencingCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('bypass_placeholder');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	SET client_min_messages = error;
	CREATE EXTENSION fencing;
	RESET client_min_messages;
	CREATE TABLE m (id int PRIMARY KEY, v text, tok bigint);
	SELECT fencing.protect('m', 'tok', scope => 'bp');
	INSERT INTO m VALUES (1, 'leader', 5);
	CREATE ROLE granted LOGIN;
	CREATE ROLE plain LOGIN;
	GRANT SELECT, INSERT, UPDATE ON m TO granted, plain;
	GRANT SET ON PARAMETER fencing.bypass TO granted;
});

sub row
{
	return $node->safe_psql('postgres', 'SELECT v || \'|\' || tok FROM m WHERE id = 1');
}

# one session: its statements, each in its own transaction unless grouped
sub session
{
	my ($user, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user ], on_error_stop => 0);
	return ($ret, $out, $err);
}

my $warning = qr/WARNING:  55000: "fencing.bypass" set before the fencing library was loaded is ignored/;

# the bootstrap superuser: named after the OS user who ran initdb
my $superuser = $node->safe_psql('postgres', 'SELECT rolname FROM pg_catalog.pg_roles WHERE oid = 10');

for my $user ($superuser, 'granted')
{
	# the pooled connection: a maintenance client SET it (the library not
	# loaded yet), the next client writes without a token
	my ($ret, $out, $err) = session($user, q{
		SET fencing.bypass = on;
		SELECT 'next client';
		UPDATE m SET v = 'tokenless' WHERE id = 1;
		SHOW fencing.bypass;
	});
	like($err, $warning, "$user: the placeholder is ignored with a WARNING when the library loads");
	like($err, qr/ERROR:  ZF002: missing fencing token/, "$user: the next client's tokenless write is refused");
	like($out, qr/^off$/m, "$user: fencing.bypass is off after the load");
	is(row(), 'leader|5', "$user: nothing committed");

	# SET LOCAL before the load, in the transaction that writes
	($ret, $out, $err) = session($user, q{
		BEGIN;
		SET LOCAL fencing.bypass = on;
		UPDATE m SET v = 'tokenless, same transaction' WHERE id = 1;
		COMMIT;
	});
	like($err, $warning, "$user: SET LOCAL before the load is ignored with a WARNING");
	like($err, qr/ERROR:  ZF002/, "$user: the write in that transaction is refused");
	is(row(), 'leader|5', "$user: nothing committed");

	# after the load, SET LOCAL in the transaction that uses it acts
	($ret, $out, $err) = session($user, qq{
		SELECT fencing.raise_pending();	-- loads the library (LOAD is for superusers)
		BEGIN;
		SET LOCAL fencing.bypass = on;
		UPDATE m SET v = 'maintenance by $user' WHERE id = 1;
		COMMIT;
		UPDATE m SET v = 'after the maintenance' WHERE id = 1;
	});
	unlike($err, qr/WARNING/, "$user: no WARNING for a bypass turned on after the load");
	like($err, qr/ERROR:  ZF002/, "$user: the next transaction is fenced again");
	is(row(), "maintenance by $user|5", "$user: the bypass turned on after the load acted in its transaction");
	$node->safe_psql('postgres',
		q{BEGIN; SELECT fencing.use_token('bp', 5); UPDATE m SET v = 'leader' WHERE id = 1; COMMIT;});
	is(row(), 'leader|5', 'reset the row');
}

# a role without the grant: Postgres refuses its placeholder at the load
my ($ret, $out, $err) = session('plain', q{
	SET fencing.bypass = on;
	SELECT 'next client';
	UPDATE m SET v = 'tokenless' WHERE id = 1;
	BEGIN;
	SET LOCAL fencing.bypass = on;
});
like($err, qr/permission denied to set parameter "fencing.bypass"/, 'plain: its placeholder is refused at the load, and so is SET LOCAL');
like($err, qr/ERROR:  ZF002/, 'plain: its tokenless write is refused');
is(row(), 'leader|5', 'plain: nothing committed');

# a value from ALTER ROLE ... SET: before and after the load, it does nothing
$node->safe_psql('postgres', q{ALTER ROLE granted SET fencing.bypass = on});
($ret, $out, $err) = session('granted', q{
	UPDATE m SET v = 'tokenless' WHERE id = 1;
	UPDATE m SET v = 'tokenless again' WHERE id = 1;
});
unlike($err, qr/WARNING/, 'ALTER ROLE SET: no WARNING (that value never acts)');
is(() = $err =~ /ERROR:  ZF002/g, 2, 'ALTER ROLE SET: both writes refused');
is(row(), 'leader|5', 'ALTER ROLE SET: nothing committed');

$node->stop;
done_testing();
