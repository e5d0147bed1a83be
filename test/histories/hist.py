#!/usr/bin/python3
# test/histories/hist.py: one randomized history of the fence, recorded.
#
# Started by test/histories/run on a cluster it made (fencing preloaded,
# fencing.shared_marks tiny, max_prepared_transactions set).  Sets up roles,
# scopes and protected tables, then runs for --seconds:
#   - N clients, each a real OS process with its own connection (pausable with
#     SIGSTOP), each the "leader" of one scope: it takes terms
#     (fence_next_epoch, leases, takeover() with tokens from an external
#     counter), and writes in transactions with its token (in the token column
#     or declared with use_token(); INSERT, UPDATE, DELETE, MERGE, upserts;
#     savepoints rolled back; prepared transactions), sometimes with an old
#     token, a never-issued one, or none at all;
#   - a monitor reading every scope's committed mark, and issuing terms of
#     many filler scopes (so that the tiny table of shared marks churns);
#   - a nemesis doing, at seeded random times: SIGSTOP/SIGCONT of a client,
#     kill -9 of a backend, kill -9 of the postmaster and a restart, a fast
#     restart, alter_scope_owner, revoke/grant, reset_mark by a superuser,
#     ALTER EXTENSION UPDATE from 1.4 (half the seeds); with --standby, the
#     promotion of a streaming standby (sync, async, async and lagging);
#     a move into a new cluster by pg_dump/pg_restore or pg_upgrade (--link
#     or copy; with --upgrade-to BINDIR, once, pg_upgrade to that newer major
#     version, 17 or 18; every later fault then runs its programs: DIR/bindir
#     names them); with --standby the moved cluster gets a standby of its own
#     (DIR/standby names it), made before or after its first term, and a dump
#     may come from the standby (caught up, or with its replay paused: lossy)
#     (and, with --sabotage, unprotect() of one table: the fence defeated
#     without any C change, so that the checker must report violations);
#     with --citus (a coordinator on --port and workers on --workers, made by
#     test/histories/run), the tables are distributed, everything goes through
#     the coordinator, and the nemesis also disables and activates, removes
#     and adds workers and moves shards, as docs/citus.md's runbooks say.
# Every operation is a JSON line (process, op, args, invoke and complete
# times on CLOCK_MONOTONIC, which all processes share, result ok / fail with
# the SQLSTATE / unknown when the connection died before the commit was
# acknowledged) in DIR/history/<process>.jsonl.  At the end the final marks and
# the audit table (every committed row change, with the statement that made
# it) are dumped for the checker (checker.py).
import argparse
import fcntl
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import psycopg

ISSUED = ['s0', 's1', 's2']
EXTERNAL = ['x0']
SCOPES = ['s0', 'x0', 's1', 's2']           # client i leads SCOPES[i % 4]
FILLERS = ['f%02d' % i for i in range(40)]   # churn fencing.shared_marks
KEYS = 16                                    # rows per table: contention
DECLARED_TABLE = {'s0': 'd_s0'}              # tokens => 'declared'
UNKNOWN_CLASSES = ('08', '57', 'XX', '58')   # the session died: outcome unknown

now = time.monotonic


class Hist:
    def __init__(self, path, proc):
        self.f = open(path, 'a', buffering=1)
        self.proc = proc

    def rec(self, op, args, inv, result, value=None, sqlstate=None, msg=None, **extra):
        r = {'proc': self.proc, 'op': op, 'args': args, 'inv': inv, 'cmp': now(),
             'result': result}
        if value is not None:
            r['value'] = value
        if sqlstate is not None:
            r['sqlstate'] = sqlstate
        if msg:
            r['msg'] = msg[:300]
        r.update(extra)
        self.f.write(json.dumps(r) + '\n')
        return r


def primary(a):
    """(data directory, port) of the current primary: with a standby, the
    nemesis's promotion moves it (the file is replaced atomically)."""
    try:
        with open(os.path.join(a.dir, 'primary')) as f:
            d, p = f.read().split()
            return d, int(p)
    except (OSError, ValueError):
        return 'data', a.port


def set_primary(a, d, port):
    tmp = os.path.join(a.dir, 'primary.tmp')
    with open(tmp, 'w') as f:
        f.write('%s %d\n' % (d, port))
    os.rename(tmp, os.path.join(a.dir, 'primary'))


def connect(a, user, name, timeout=60.0, port=None):
    """A connection to the current primary (never to a standby: a client
    that reached the old port while a promotion rebuilt it as a standby
    tries again)."""
    end = now() + timeout
    while True:
        try:
            p = port or primary(a)[1]
            if p == 0:
                raise psycopg.OperationalError('no primary: a promotion is under way')
            c = psycopg.connect('host=%s port=%d dbname=postgres user=%s application_name=%s connect_timeout=5'
                                % (a.host, p, user, name), autocommit=True)
            if c.execute('SELECT pg_catalog.pg_is_in_recovery()').fetchone()[0]:
                c.close()
                raise psycopg.OperationalError('a standby')
            return c
        except psycopg.Error:
            if now() > end:
                raise
            time.sleep(0.2)


def classify(e):
    """(result, sqlstate, message) of an exception from a statement that
    would have committed by itself."""
    st = getattr(e, 'sqlstate', None)
    if st is None or st[:2] in UNKNOWN_CLASSES:
        return 'unknown', st, str(e)
    return 'fail', st, str(e)


def conn_dead(c):
    return c is None or c.closed or c.broken


# ------------------------------------------------------------------ setup
ROLES = r"""
CREATE ROLE app LOGIN;
CREATE ROLE owner_a;
CREATE ROLE owner_b;
ALTER ROLE app SET idle_in_transaction_session_timeout = '3s';
ALTER ROLE app SET statement_timeout = '15s';
"""
# The audit: a table the history's tables' triggers fill with every change
# and the statement's tag; on Citus a local table on every node, filled by
# its shards (a shard's name is its table's and "_<shard id>": stripped; no
# history table's own name ends so).
AUDIT_TABLE = r"""
CREATE TABLE IF NOT EXISTS public.hist_audit (
    n bigserial PRIMARY KEY,
    tbl text NOT NULL, kind text NOT NULL, k int, payload text, tok bigint,
    stmt text, xid xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id(),
    at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp());
GRANT INSERT ON public.hist_audit TO app;
GRANT USAGE ON SEQUENCE public.hist_audit_n_seq TO app;
"""
AUDIT_FN = r"""
CREATE FUNCTION public.hist_audit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE t text := pg_catalog.regexp_replace(TG_TABLE_NAME, '_[0-9]+$', '');
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO public.hist_audit (tbl, kind, k, payload, tok, stmt)
        VALUES (t, 'D', OLD.k, OLD.payload, OLD.tok, pg_catalog.current_setting('hist.op', true));
        RETURN OLD;
    END IF;
    INSERT INTO public.hist_audit (tbl, kind, k, payload, tok, stmt)
    VALUES (t, left(TG_OP, 1), NEW.k, NEW.payload, NEW.tok, pg_catalog.current_setting('hist.op', true));
    RETURN NEW;
END $$;
"""


def create_scopes(c):
    """The history's scopes, owned by owner_a, 'lead' and 'write' granted to app."""
    for s in ISSUED:
        c.execute("SELECT fencing.create_scope(%s, 'issued', 'owner_a')", (s,))
    for s in EXTERNAL:
        c.execute("SELECT fencing.create_scope(%s, 'external', 'owner_a')", (s,))
    for s in SCOPES:
        for p in ('lead', 'write'):
            c.execute("SELECT fencing.grant_scope(%s, %s, 'app')", (s, p))


def scope_tables(s):
    """Scope s's tables and how each is fenced: by its scope column, by a
    declared token, and per row only (written with s's terms)."""
    tables = [('w_' + s, 'column')]
    if s in DECLARED_TABLE:
        tables.append((DECLARED_TABLE[s], 'declared'))
    tables.append(('r_' + s, 'row'))
    return tables


def create_history_table(c, s, t, how):
    """Table t of scope s, fenced as how says (scope_tables()), audited."""
    c.execute('CREATE TABLE %s (k int PRIMARY KEY, payload text NOT NULL, tok bigint)' % t)
    if how == 'row':
        c.execute("SELECT fencing.protect(%s, 'tok')", (t,))
    else:
        c.execute("SELECT fencing.protect(%s, 'tok', scope => %s, tokens => %s)", (t, s, how))
    c.execute('CREATE TRIGGER hist_audit AFTER INSERT OR UPDATE OR DELETE ON %s '
              'FOR EACH ROW EXECUTE FUNCTION public.hist_audit()' % t)


def setup(a):
    if a.citus:
        return citus_setup(a)
    c = connect(a, 'postgres', 'hist-setup')
    # half of the histories start on the previous release: the nemesis runs
    # ALTER EXTENSION UPDATE with the clients' backends connected
    if random.Random(a.seed).random() < 0.5:
        c.execute("CREATE EXTENSION fencing VERSION '1.4'")
        with open(os.path.join(a.dir, 'ext-from'), 'w') as f:
            f.write('1.4')
    else:
        c.execute('CREATE EXTENSION fencing')
    c.execute(ROLES)
    c.execute(AUDIT_TABLE)
    c.execute(AUDIT_FN)
    create_scopes(c)
    for s in SCOPES:
        for t, how in scope_tables(s):
            create_history_table(c, s, t, how)
            c.execute('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO app' % t)
    c.close()


# ------------------------------------------------------------------ clients
class ExternalLock:
    """The external lock service's token counter: a file under a lock."""
    def __init__(self, path):
        self.path = path

    def next(self, rnd):
        with open(self.path, 'a+') as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            cur = int(f.read().strip() or '0')
            cur += rnd.randint(1, 3)
            f.seek(0)
            f.truncate()
            f.write(str(cur))
            return cur


def client(a, cid):
    rnd = random.Random(a.seed * 1000 + cid)
    scope = SCOPES[cid % len(SCOPES)]
    name = 'c%d' % cid
    h = Hist(os.path.join(a.dir, 'history', name + '.jsonl'), name)
    ext = ExternalLock(os.path.join(a.dir, 'external-token'))
    end = now() + a.seconds
    conn = None
    term = None            # the token this leader believes it holds
    old = []               # tokens it held before
    lease = None           # (holder, term)
    fenced = False         # a write with its term was refused as stale
    seq = 0
    prepared_ok = a.max_prepared > 0

    def reconnect():
        nonlocal conn
        if conn_dead(conn):
            try:
                if conn is not None:
                    conn.close()
            except Exception:
                pass
            conn = connect(a, 'app', 'hist-' + name, timeout=max(1.0, end - now() + 5))
            # a prepared transaction of ours left by a dead connection: end it
            for (gid,) in conn.execute("SELECT gid FROM pg_catalog.pg_prepared_xacts "
                                       "WHERE gid LIKE %s", (name + '-%',)).fetchall():
                try:
                    conn.execute("ROLLBACK PREPARED '%s'" % gid)
                except psycopg.Error:
                    pass

    def single(op, args, sql, params, one=True):
        """A call that commits by itself: ok, fail or unknown."""
        inv = now()
        try:
            cur = conn.execute(sql, params)
            row = cur.fetchone()
            return h.rec(op, args, inv, 'ok', value=row[0] if one else list(row))
        except psycopg.Error as e:
            res, st, msg = classify(e)
            return h.rec(op, args, inv, res, sqlstate=st, msg=msg)

    while now() < end:
        try:
            reconnect()
        except psycopg.Error:
            break
        seq += 1
        x = rnd.random()
        if term is None or x < 0.08 or (fenced and x < 0.6):
            fenced = False
            # take a term
            if scope in EXTERNAL:
                tok = ext.next(rnd)
                r = single('takeover', {'scope': scope, 'token': tok},
                           'SELECT fencing.takeover(%s, %s)', (scope, tok))
                if r['result'] == 'ok':
                    if term is not None:
                        old.append(term)
                    term = tok
            elif rnd.random() < 0.5:
                r = single('next_epoch', {'scope': scope},
                           'SELECT fencing.fence_next_epoch(%s, %s)', (scope, name))
                if r['result'] == 'ok':
                    if term is not None:
                        old.append(term)
                    term = r['value']
            else:
                holder = '%s-%d' % (name, seq)     # unique: a grant is always a new term
                r = single('acquire_lease', {'scope': scope, 'holder': holder},
                           "SELECT granted, term FROM fencing.acquire_lease(%s, %s, '1 second')",
                           (scope, holder), one=False)
                if r['result'] == 'ok' and r['value'][0]:
                    if term is not None:
                        old.append(term)
                    term = r['value'][1]
                    lease = (holder, term)
            continue
        if lease and x < 0.16:
            single('renew_lease', {'scope': scope, 'holder': lease[0], 'term': lease[1]},
                   "SELECT renewed FROM fencing.renew_lease(%s, %s, %s, '1 second')",
                   (scope, lease[0], lease[1]))
            continue
        r = write(a, h, rnd, conn, name, seq, scope, term, old, prepared_ok)
        if r['result'] == 'fail' and r.get('sqlstate') == 'ZF001' and r['args']['why'] == 'current':
            fenced = True
        time.sleep(rnd.uniform(0.0, 0.02))
    try:
        if conn is not None:
            conn.close()
    except Exception:
        pass


def write(a, h, rnd, conn, name, seq, scope, term, old, prepared_ok):
    tables = ['w_' + scope] + ([DECLARED_TABLE[scope]] if scope in DECLARED_TABLE else [])
    table = rnd.choice(tables) if rnd.random() < 0.8 else 'r_' + scope
    declared_only = table.startswith('d_')
    rowmode = table.startswith('r_')
    y = rnd.random()
    if y < 0.05:
        token, why = None, 'none'                          # tokenless: must be refused
    elif y < 0.17 and old:
        token, why = rnd.choice(old), 'old'                # a zombie's write
    elif y < 0.20 and scope not in EXTERNAL:
        token, why = term + rnd.randint(1, 1000), 'future'  # never issued (issued scopes: ZF003)
    else:
        token, why = term, 'current'
    mode = 'declared' if declared_only or rnd.random() < 0.5 else 'column'
    if token is None:
        mode = 'none'
    iso = rnd.choice(['READ COMMITTED'] * 3 + ['REPEATABLE READ', 'SERIALIZABLE'])
    sync_off = rnd.random() < 0.3
    prepared = prepared_ok and rnd.random() < 0.1
    gid = '%s-%d' % (name, seq)
    stmts = []
    args = {'scope': scope, 'table': table, 'rowmode': rowmode, 'token': token, 'why': why, 'mode': mode,
            'iso': iso, 'sync_off': sync_off, 'prepared': prepared, 'stmts': stmts}
    inv = now()
    commit_sent = False
    try:
        conn.execute('BEGIN ISOLATION LEVEL ' + iso)
        if a.citus:
            # the statement's tag reaches the shards' audit triggers: Citus
            # sends SET LOCAL to the workers of the transaction with this
            conn.execute("SET LOCAL citus.propagate_set_commands = 'local'")
        if sync_off:
            conn.execute('SET LOCAL synchronous_commit = off')
        if mode == 'declared' and rowmode:
            conn.execute('SELECT fencing.use_token(%s::bigint)', (token,))
        elif mode == 'declared':
            conn.execute('SELECT fencing.use_token(%s, %s)', (scope, token))
        for i in range(rnd.randint(1, 3)):
            sid = '%s-%d-%d' % (name, seq, i)
            k = rnd.randrange(KEYS)
            kinds = ['insert', 'update', 'upsert', 'merge']
            if a.citus:
                kinds.remove('merge')       # Citus 13: MERGE into a distributed table from VALUES is refused
            if mode != 'column' and not rowmode:
                kinds.append('delete')      # per row only: no mark of deleted rows (design.md)
            kind = rnd.choice(kinds)
            if kind == 'insert' and rnd.random() < 0.7:
                k = rnd.randrange(KEYS, KEYS * 64)     # a new row, mostly
            tokcol = mode == 'column'
            if kind == 'insert':
                sql = ('INSERT INTO %s (k, payload%s) VALUES (%%s, %%s%s)'
                       % (table, ', tok' if tokcol else '', ', %s' if tokcol else ''))
                params = (k, sid, token) if tokcol else (k, sid)
            elif kind == 'update':
                sql = ('UPDATE %s SET payload = %%s%s WHERE k = %%s'
                       % (table, ', tok = %s' if tokcol else ''))
                params = (sid, token, k) if tokcol else (sid, k)
            elif kind == 'upsert':
                sql = ('INSERT INTO %s AS t (k, payload%s) VALUES (%%s, %%s%s) '
                       'ON CONFLICT (k) DO UPDATE SET payload = excluded.payload%s'
                       % (table, ', tok' if tokcol else '', ', %s' if tokcol else '',
                          ', tok = excluded.tok' if tokcol else ''))
                params = (k, sid, token) if tokcol else (k, sid)
            elif kind == 'merge':
                if tokcol:
                    sql = ('MERGE INTO %s t USING (VALUES (%%s::int, %%s::text, %%s::bigint)) v(k, p, tok) '
                           'ON t.k = v.k WHEN MATCHED THEN UPDATE SET payload = v.p, tok = v.tok '
                           'WHEN NOT MATCHED THEN INSERT (k, payload, tok) VALUES (v.k, v.p, v.tok)' % table)
                    params = (k, sid, token)
                else:
                    sql = ('MERGE INTO %s t USING (VALUES (%%s::int, %%s::text)) v(k, p) '
                           'ON t.k = v.k WHEN MATCHED THEN UPDATE SET payload = v.p '
                           'WHEN NOT MATCHED THEN INSERT (k, payload) VALUES (v.k, v.p)' % table)
                    params = (k, sid)
            else:
                sql = 'DELETE FROM %s WHERE k = %%s' % table
                params = (k,)
            sp = rnd.random() < 0.3
            st = {'id': sid, 'kind': kind, 'k': k, 'sp': sp}
            stmts.append(st)
            if sp:
                conn.execute('SAVEPOINT s')
            if a.citus:
                conn.execute("SET LOCAL hist.op = '%s'" % sid)
            else:
                conn.execute("SELECT pg_catalog.set_config('hist.op', %s, true)", (sid,))
            try:
                cur = conn.execute(sql, params)
                st['rows'] = cur.rowcount
                st['result'] = 'ok'
            except psycopg.errors.Error as e:
                st['result'] = 'fail'
                st['sqlstate'] = e.sqlstate
                if not sp or conn_dead(conn) or (e.sqlstate or '')[:2] in UNKNOWN_CLASSES:
                    raise
                conn.execute('ROLLBACK TO SAVEPOINT s')
                continue
            if sp and rnd.random() < 0.3:
                conn.execute('ROLLBACK TO SAVEPOINT s')
                st['result'] = 'rolledback'
        commit_sent = True
        if prepared:
            conn.execute("PREPARE TRANSACTION '%s'" % gid)
            args['prepared_ok'] = True
            time.sleep(rnd.uniform(0, 0.01))
            conn.execute("COMMIT PREPARED '%s'" % gid)
        else:
            conn.execute('COMMIT')
        # COMMIT of an aborted transaction is a ROLLBACK (psycopg reports no error)
        return h.rec('write', args, inv, 'ok')
    except psycopg.Error as e:
        st_ = getattr(e, 'sqlstate', None)
        dead = conn_dead(conn) or st_ is None or st_[:2] in UNKNOWN_CLASSES
        if commit_sent and dead:
            r = h.rec('write', args, inv, 'unknown', sqlstate=st_, msg=str(e))
        elif commit_sent and prepared and args.get('prepared_ok'):
            # COMMIT PREPARED failed with the session alive: leave it to the end
            r = h.rec('write', args, inv, 'unknown', sqlstate=st_, msg=str(e))
        else:
            r = h.rec('write', args, inv, 'fail', sqlstate=st_ or '08006', msg=str(e))
        if not conn_dead(conn):
            try:
                conn.execute('ROLLBACK')
            except psycopg.Error:
                pass
        return r


# ------------------------------------------------------------------ monitor
def monitor(a):
    rnd = random.Random(a.seed * 1000 + 900)
    h = Hist(os.path.join(a.dir, 'history', 'monitor.jsonl'), 'monitor')
    end = now() + a.seconds
    conn = None
    sconn, seen, seq = None, {}, 0
    while now() < end:
        try:
            if conn_dead(conn):
                conn = connect(a, 'postgres', 'hist-monitor', timeout=max(1.0, end - now() + 5))
        except psycopg.Error:
            break
        s = rnd.choice(SCOPES)
        inv = now()
        try:
            v = conn.execute('SELECT fencing.committed_mark(%s)', (s,)).fetchone()[0]
            h.rec('read_mark', {'scope': s}, inv, 'ok', value=v)
        except psycopg.Error as e:
            res, st, msg = classify(e)
            h.rec('read_mark', {'scope': s}, inv, 'fail' if res == 'fail' else 'unknown',
                  sqlstate=st, msg=msg)
        if rnd.random() < 0.3:
            f = rnd.choice(FILLERS)
            inv = now()
            try:
                v = conn.execute('SELECT fencing.fence_next_epoch(%s)', (f,)).fetchone()[0]
                h.rec('next_epoch', {'scope': f}, inv, 'ok', value=v)
            except psycopg.Error as e:
                res, st, msg = classify(e)
                h.rec('next_epoch', {'scope': f}, inv, res, sqlstate=st, msg=msg)
        if a.standby != 'none' and rnd.random() < 0.3:
            sconn, seen, seq = standby_pool(a, h, rnd, sconn, seen, seq)
        time.sleep(rnd.uniform(0.01, 0.05))


def standby_pool(a, h, rnd, sconn, seen, seq):
    """A pooled backend on the standby, as the application's role: a retried
    call lands there (read-only calls of the extension: marks, tokens), and
    the backend lives across the standby's promotion.  Once its server is the
    published primary, it writes with the marks it read while a standby
    (recorded and judged like the clients' writes), then leaves."""
    try:
        if conn_dead(sconn):
            d, p = primary(a)
            if p == 0:
                return None, {}, seq
            sp = standby_of(a)[1]
            sconn = psycopg.connect('host=%s port=%d dbname=postgres user=app application_name=hist-pool '
                                    'connect_timeout=5' % (a.host, sp), autocommit=True)
            sconn.port_ = sp
            seen = {}
        s = rnd.choice(SCOPES)
        if sconn.execute('SELECT pg_catalog.pg_is_in_recovery()').fetchone()[0]:
            v = sconn.execute('SELECT fencing.committed_mark(%s)', (s,)).fetchone()[0]
            if v:
                seen[s] = v
                sconn.execute('BEGIN')
                sconn.execute('SELECT fencing.use_token(%s, %s)', (s, v))
                sconn.execute('SELECT count(*) FROM w_%s' % s).fetchone()
                sconn.execute('COMMIT')
            sconn.execute('SELECT count(*) FROM fencing.lease_status').fetchone()
        elif primary(a)[1] == sconn.port_ and seen:
            s = rnd.choice(sorted(seen))
            for _ in range(3):
                seq += 1
                write(a, h, rnd, sconn, 'pool', seq, s, seen[s], [], False)
            sconn.close()
            return None, {}, seq
    except psycopg.Error:
        try:
            if sconn is not None and not sconn.closed:
                sconn.execute('ROLLBACK')
        except psycopg.Error:
            pass
    return sconn, seen, seq


# ------------------------------------------------------------------ nemesis
# the programs of a PostgreSQL installation the nemesis runs: from the
# bindir of the server that runs now (DIR/bindir, written by test/histories/run
# and replaced by a move to a newer major version), so that after the move
# every restart, kill, dump and further upgrade uses the new version's programs
PG_PROGRAMS = ('pg_ctl', 'initdb', 'pg_upgrade', 'pg_dump', 'pg_dumpall', 'pg_restore',
               'psql', 'pg_basebackup', 'pg_controldata')


def bindir(a):
    try:
        with open(os.path.join(a.dir, 'bindir')) as f:
            return f.read().strip() or None
    except OSError:
        return None


def set_bindir(a, b):
    tmp = os.path.join(a.dir, 'bindir.tmp')
    with open(tmp, 'w') as f:
        f.write(b + '\n')
    os.rename(tmp, os.path.join(a.dir, 'bindir'))


def major_of(b):
    """The major version of the server in bindir b (15, 18)."""
    out = subprocess.run([os.path.join(b, 'postgres'), '--version'], capture_output=True,
                         text=True).stdout
    return int(re.search(r'\(PostgreSQL\) (\d+)', out).group(1))


def as_pg(a, cmd, bin_dir=None, log=None):
    b = bin_dir or bindir(a)
    path = os.environ['PATH']
    if b:
        path = b + ':' + path
        if cmd[0] in PG_PROGRAMS:
            cmd = [os.path.join(b, cmd[0])] + cmd[1:]
    if os.getuid() == 0:
        cmd = ['runuser', '-u', 'postgres', '--', 'env', 'PATH=' + path] + cmd
    if log:
        with open(os.path.join(a.dir, log), 'a') as f:
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=a.dir).returncode
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          cwd=a.dir).returncode


def pg_ctl(a, *args, data=None, bin_dir=None):
    return as_pg(a, ['pg_ctl', '-D', os.path.join(a.dir, data or primary(a)[0])] + list(args),
                 bin_dir=bin_dir)


def postmaster_pid(a, data=None):
    try:
        with open(os.path.join(a.dir, data or primary(a)[0], 'postmaster.pid')) as f:
            return int(f.readline())
    except (OSError, ValueError):
        return None


def start_server(a, data=None, bin_dir=None):
    data = data or primary(a)[0]
    log = os.path.join(a.dir, 'server.log' if data == 'data' else 'server-%s.log' % data)
    end = now() + 60
    while now() < end:
        if pg_ctl(a, '-l', log, '-w', '-t', '30', 'start', data=data, bin_dir=bin_dir) == 0:
            return True
        time.sleep(0.5)
    return False


def make_standby(a, data, port, source_port=None):
    """A streaming standby of the current primary in a.dir/data, on port."""
    path = os.path.join(a.dir, data)
    subprocess.run(['rm', '-rf', path])
    if as_pg(a, ['pg_basebackup', '-D', path, '-R', '-X', 'stream', '-c', 'fast',
                 '-h', a.host, '-p', str(source_port or primary(a)[1]), '-U', 'postgres']) != 0:
        return False
    with open(os.path.join(path, 'postgresql.auto.conf'), 'a') as f:
        f.write("port = %d\n" % port)
        # a synchronous run: the standby, once promoted, waits for its own
        # standby as its primary did (a moved cluster's standby copies a
        # configuration that has no synchronous standby yet: without this,
        # its promotion runs asynchronously and a later failover loses
        # acknowledged commits, seed 304)
        if a.standby == 'sync':
            f.write("synchronous_standby_names = '*'\n")
    return start_server(a, data)


def pconn(a, port, timeout=60.0):
    """A superuser's connection to the server on port (primary or standby)."""
    end = now() + timeout
    while True:
        try:
            return psycopg.connect('host=%s port=%d dbname=postgres user=postgres '
                                   'application_name=hist-nemesis connect_timeout=5' % (a.host, port),
                                   autocommit=True)
        except psycopg.Error:
            if now() > end:
                raise
            time.sleep(0.2)


def fence_older(c, calls=4):
    """fence_older_timelines() called until it returns 0 (operations.md), at
    most calls times: (scopes lifted, converged).  On a moved cluster whose
    clock was not claimed yet it did not converge before 1.5 claimed the
    move there (docs/histories.md, Findings): a history where it still does
    not is reported (finding:)."""
    raised = 0
    for _ in range(calls):
        k = c.execute('SELECT fencing.fence_older_timelines()').fetchone()[0]
        raised += k
        if k == 0:
            return raised, True
    return raised, False


def own_conf(a, d, port):
    """The moved cluster's own settings, after the old one's: its port (the
    old primary's), no synchronous standby until it has one of its own (the
    retired cluster's standby confirms nothing), no upstream."""
    with open(os.path.join(a.dir, d, 'postgresql.auto.conf'), 'a') as f:
        f.write("port = %d\nsynchronous_standby_names = ''\nprimary_conninfo = ''\n" % port)
    return 0


def move_source(a, mrnd, args):
    """Where a dump comes from.  With a standby, half the time from the
    standby (hot), and half of those with its replay paused 0.5-3 s while
    the clients go on: what it had not replayed is not in the dump, as after
    an asynchronous failover (the move is then 'lossy': the checker excuses
    what it lost as it does an asynchronous promotion's losses).  Returns
    the retired cluster's standby (data directory, port) or None."""
    if a.standby == 'none':
        return None
    sb = standby_of(a)
    if not postmaster_pid(a, sb[0]):
        args['standby'] = 'down'
        return sb
    if mrnd is None or mrnd.random() >= 0.5:
        return sb
    args['source'] = 'standby'
    if mrnd.random() < 0.5:
        lag = mrnd.uniform(0.5, 3.0)
        try:
            c = pconn(a, sb[1], timeout=10)
            c.execute('SELECT pg_catalog.pg_wal_replay_pause()')
            c.close()
            args.update(lagging=round(lag, 2), lossy=True, external=EXTERNAL)
            time.sleep(lag)
        except psycopg.Error as e:
            args['pause_error'] = str(e)[:200]
    return sb


def caught_up(a, port, sb):
    """The standby replayed all the primary wrote (its sessions ended by the
    restart before): a dump of the standby then holds every acknowledged
    commit."""
    c = pconn(a, port)
    lsn = c.execute('SELECT pg_catalog.pg_current_wal_lsn()::text').fetchone()[0]
    c.close()
    sc = pconn(a, sb[1])
    end = now() + 60
    try:
        while now() < end:
            if sc.execute('SELECT pg_catalog.pg_last_wal_replay_lsn() OPERATOR(pg_catalog.>=) %s::pg_lsn',
                          (lsn,)).fetchone()[0]:
                return 0
            time.sleep(0.1)
        return 1
    finally:
        sc.close()


def revive_standby(a, sb, args):
    """A move that failed before the new cluster ran: the old standby goes
    on (started again, its replay resumed); nothing was lost."""
    for k in ('lossy', 'external'):
        args.pop(k, None)
    if not sb:
        return
    try:
        if postmaster_pid(a, sb[0]) and pg_ctl(a, 'status', data=sb[0]) == 0:
            c = pconn(a, sb[1], timeout=10)
            c.execute('SELECT pg_catalog.pg_wal_replay_resume()')
            c.close()
        else:
            start_server(a, sb[0])
    except psycopg.Error:
        pass


def first_term(a, port, timeout=10.0):
    """Waits until the moved cluster's clock is claimed (the first term
    there: a client's, the monitor's, or fence_older_timelines()'s);
    False if it did not happen in time (or a 1.4 install has no
    clock_state())."""
    end = now() + timeout
    try:
        c = pconn(a, port, timeout=timeout)
        try:
            while now() < end:
                if c.execute('SELECT state FROM fencing.clock_state()').fetchone()[0] == 'claimed':
                    return True
                time.sleep(0.1)
        finally:
            c.close()
    except psycopg.Error:
        time.sleep(max(0.0, end - now()))
    return False


def move_ended(a, h, rnd, args, inv, outcome, sb, frozen, retired=None):
    """The end of a move: the retired data directories removed (the old
    primary's, when given, and the retired cluster's standby), the fault
    recorded, then the failover right after the move when one was armed
    (moved())."""
    for d in ([retired] if retired else []) + ([sb[0]] if sb else []):
        subprocess.run(['rm', '-rf', os.path.join(a.dir, d)])
    r = h.rec('fault', args, inv, outcome)
    if frozen:
        promote(a, h, rnd, None, frozen=frozen[0], after_move=frozen[1])
    return r


def moved(a, h, rnd, mrnd, args, new_d, port, sb, n):
    """The moved cluster is published to the clients.  First, always after a
    lossy move and else half the time, fence_older_timelines() (runbook
    step 6: every term of the old cluster fenced).  With a standby, the
    moved cluster gets a streaming standby of its own on the retired
    standby's port, made before the clients come back (before the first
    term) or once the first term was taken there; in an asynchronous run
    half of the 'before' standbys are stopped or get their WAL receiver
    frozen before the clients come back, and, the first term taken, the
    primary dies and that standby (which missed, or may have missed, the
    move's claim of the clock) is promoted: returns (what it was, when the
    clients came back) for the caller's promote()."""
    if mrnd is None:
        mrnd = rnd
    if args.get('lossy') or mrnd.random() < 0.5:
        c = pconn(a, port)
        c.execute("SET statement_timeout = '60s'")
        args['fenced_older'], args['fenced_older_converged'] = fence_older(c)
        c.close()
    if not sb:
        set_primary(a, new_d, port)
        return
    new_sb = 'data-s%d' % n
    when = mrnd.choice(['before', 'after'])
    args['standby_made'] = when + ' the first term'

    def standby():
        ok = make_standby(a, new_sb, sb[1], source_port=port)
        set_standby(a, new_sb, sb[1])
        args['standby_ok'] = ok
        if ok and a.standby == 'sync':
            c = pconn(a, port)
            c.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
            c.execute('SELECT pg_catalog.pg_reload_conf()')
            c.close()
        return ok
    frozen = None
    if when == 'before':
        if standby() and a.standby == 'async' and mrnd.random() < 0.5:
            if mrnd.random() < 0.5:
                # down (stopped) while the first term claims the clock: it
                # surely misses the claim
                if pg_ctl(a, '-m', 'fast', '-w', '-t', '60', 'stop', data=new_sb) == 0:
                    frozen = 'stopped'
            else:
                # its WAL receiver frozen: what the primary sent meanwhile
                # is read only as the primary dies (it may have the claim)
                try:
                    c = pconn(a, sb[1], timeout=10)
                    r = c.execute('SELECT pid FROM pg_catalog.pg_stat_wal_receiver').fetchone()
                    c.close()
                    if r and r[0]:
                        frozen = r[0]
                        os.kill(frozen, signal.SIGSTOP)
                except (psycopg.Error, OSError) as e:
                    args['freeze_error'] = str(e)[:200]
            if frozen:
                args['standby_then'] = 'stopped' if frozen == 'stopped' else 'wal receiver frozen'

        published = now()
        set_primary(a, new_d, port)
        if frozen:
            args['first_term_seen'] = first_term(a, port)
            time.sleep(mrnd.uniform(0.0, 1.5))
            args['then_promoted'] = True
            return frozen, published
        return
    set_primary(a, new_d, port)
    args['first_term_seen'] = first_term(a, port)
    standby()


def dump_form(a, conn, n):
    """How a move by dump is made (a Random of its own, by the seed and the
    move's number: the other choices replay as without it), as
    docs/operations.md's runbooks say: 'whole', the whole database (half of
    the moves); 'schema', the application's schema alone (pg_dump -n
    public) into a database where CREATE EXTENSION made a new extension and
    the operator made the scopes again; 'rows', the application's rows
    alone (pg_dump -a -n public) restored with --disable-triggers into a
    schema the application's migrations made (setup()'s, protect()
    included).  Neither of the last two carries the scopes' marks (the
    checker excuses them, as a reset of every scope) nor the clock: the
    restored fence reads the rows, and the new cluster's first term must
    be above every term of the old one (I1).  Only from a 1.5 extension
    (a 1.4 one is updated on the source first, as the runbook says)."""
    form = random.Random(a.seed * 1000 + 900 + n).choice(['whole', 'whole', 'schema', 'rows'])
    if form != 'whole':
        v = conn.execute("SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'fencing'").fetchone()
        if not v or v[0] == '1.4':
            form = 'whole'
    return form


def migrate(a, port, form):
    """What the new cluster has before a restore of the application's data
    alone: the extension (new) and the scopes; for 'rows' also the
    application's tables, fenced and audited, as setup() made them."""
    c = connect(a, 'postgres', 'hist-nemesis', timeout=60, port=port)
    try:
        c.execute('CREATE EXTENSION fencing')
        create_scopes(c)
        if form == 'rows':
            c.execute(AUDIT_TABLE)
            c.execute(AUDIT_FN)
            for s in SCOPES:
                for t, how in scope_tables(s):
                    create_history_table(c, s, t, how)
                    c.execute('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO app' % t)
    finally:
        c.close()
    return 0


def restore_list(a, dump, lst):
    """pg_dump -n public writes CREATE SCHEMA public, which the new
    database has: the restore's list without it (its privileges and the
    rest kept), as pg_restore -l / -L do."""
    b = bindir(a)
    out = subprocess.run([os.path.join(b, 'pg_restore') if b else 'pg_restore', '-l', dump],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return out.returncode
    with open(lst, 'w') as f:
        f.writelines(line + '\n' for line in out.stdout.splitlines()
                     if not re.search(r' SCHEMA - public ', line))
    return 0


def fence_always(a, port):
    """The runbook's last step after a restore with --disable-triggers: its
    ENABLE TRIGGER ALL left the fence firing in origin mode only, and
    fencing.protected_tables says so; ENABLE ALWAYS makes it whole again."""
    c = connect(a, 'postgres', 'hist-nemesis', timeout=60, port=port)
    try:
        for rel, in c.execute("SELECT relation::text FROM fencing.protected_tables "
                              "WHERE relation::text NOT LIKE 'fencing.%'").fetchall():
            c.execute('ALTER TABLE %s ENABLE ALWAYS TRIGGER zz_fence_row, '
                      'ENABLE ALWAYS TRIGGER zz_fence_truncate' % rel)
    finally:
        c.close()
    return 0


def dump_restore(a, h, rnd, conn, n, mrnd=None):
    """The database moves to a new cluster with pg_dump and pg_restore (the
    roles with pg_dumpall --globals-only), whole or its application's data
    alone (dump_form()): the clients are shut out and every session ended
    first, so everything acknowledged is in the dump (unless the dump comes
    from a standby whose replay was paused: move_source); the new cluster
    (timeline 1, a new system identifier) takes the primary's port, and
    with a standby gets one of its own (moved())."""
    inv = now()
    form = dump_form(a, conn, n)
    args = {'kind': 'dump_restore', 'source': 'primary', 'form': form}
    old_d, port = primary(a)
    sb = move_source(a, mrnd, args)
    src_port = sb[1] if args['source'] == 'standby' else port
    set_primary(a, 'none', 0)
    conn.close()
    time.sleep(0.5)
    new_d = 'data-r%d' % n
    dump = os.path.join(a.dir, 'db.dump')
    glob_ = os.path.join(a.dir, 'globals.sql')
    lst = os.path.join(a.dir, 'restore.list')
    conn_args = ['-h', a.host, '-p', str(port), '-U', 'postgres']
    src_args = ['-h', a.host, '-p', str(src_port), '-U', 'postgres']
    steps = [
        ('restart', lambda: pg_ctl(a, '-m', 'fast', '-w', '-t', '60', 'restart', data=old_d)),
        ('globals', lambda: as_pg(a, ['pg_dumpall', '--globals-only', '-f', glob_] + src_args)),
        ('dump', lambda: as_pg(a, ['pg_dump', '-Fc', '-f', dump, '-d', 'postgres']
                               + {'whole': [], 'schema': ['-n', 'public'],
                                  'rows': ['-a', '-n', 'public']}[form] + src_args)),
        ('stop', lambda: pg_ctl(a, '-m', 'fast', '-w', '-t', '60', 'stop', data=old_d)),
        ('initdb', lambda: as_pg(a, ['initdb', '-D', os.path.join(a.dir, new_d), '-A', 'trust',
                                     '-U', 'postgres', '--no-sync'])),
        ('conf', lambda: as_pg(a, ['cp', os.path.join(a.dir, old_d, 'postgresql.conf'),
                                   os.path.join(a.dir, old_d, 'postgresql.auto.conf'),
                                   os.path.join(a.dir, new_d)])),
        ('own_conf', lambda: own_conf(a, new_d, port)),
        ('start', lambda: 0 if start_server(a, new_d) else 1),
        ('roles', lambda: as_pg(a, ['psql', '-X', '-q', '-f', glob_, '-d', 'postgres'] + conn_args) and 0),
        ('restore', lambda: as_pg(a, ['pg_restore', '-d', 'postgres', '--exit-on-error', dump]
                                  + {'whole': [], 'schema': ['-L', lst],
                                     'rows': ['--disable-triggers']}[form] + conn_args)),
    ]
    if form != 'whole':
        steps.insert([s[0] for s in steps].index('restore'), ('migrate', lambda: migrate(a, port, form)))
    if form == 'schema':
        steps.insert([s[0] for s in steps].index('restore'), ('list', lambda: restore_list(a, dump, lst)))
    if form == 'rows':
        steps.append(('always', lambda: fence_always(a, port)))
    if args['source'] == 'standby' and not args.get('lagging'):
        steps.insert(1, ('caught_up', lambda: caught_up(a, port, sb)))
    if sb:
        # the retired cluster's standby: stopped once the dump is taken
        steps.insert([s[0] for s in steps].index('initdb'),
                     ('stop_standby', lambda: pg_ctl(a, '-m', 'immediate', '-w', '-t', '60', 'stop', data=sb[0])
                      if postmaster_pid(a, sb[0]) else 0))
    for name, step in steps:
        try:
            rc = step()
        except psycopg.Error as e:
            rc = str(e)[:200]
        if rc != 0:
            args.update(step=name, rc=rc)
            # leave a working primary behind: the new one if it runs, else the old
            if name in ('restore', 'roles'):
                try:
                    frozen = moved(a, h, rnd, mrnd, args, new_d, port, sb, n)
                except psycopg.Error:
                    set_primary(a, new_d, port)
                    frozen = None
                return move_ended(a, h, rnd, args, inv, 'fail', sb, frozen)
            pg_ctl(a, '-m', 'fast', '-w', '-t', '60', 'stop', data=new_d)
            subprocess.run(['rm', '-rf', os.path.join(a.dir, new_d)])
            start_server(a, old_d)
            revive_standby(a, sb, args)
            set_primary(a, old_d, port)
            return h.rec('fault', args, inv, 'fail')
    # Scope owners and grantees are role OIDs, which the new cluster gave
    # out anew: every scope is owned by, and granted to, a number that is no
    # role (or, later, some other role).  fencing.health says so; repair as
    # docs/security.md's known limits say, before the leaders come back.
    repaired = 0
    try:
        c = connect(a, 'postgres', 'hist-nemesis', timeout=60, port=port)
        dangling = c.execute("SELECT count(*) FROM fencing.health WHERE \"check\" IN "
                             "('scope owned by a dropped role', 'grant to a dropped role')").fetchone()[0]
        for sc in SCOPES + FILLERS:
            if c.execute('SELECT 1 FROM fencing.scopes WHERE scope = %s', (sc,)).fetchone():
                c.execute("SELECT fencing.alter_scope_owner(%s, 'owner_a')", (sc,))
                repaired += 1
        c.execute('DELETE FROM fencing.scope_grants g WHERE g.grantee <> 0 AND NOT EXISTS '
                  '(SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid = g.grantee)')
        for sc in SCOPES:
            for pr in ('lead', 'write'):
                c.execute("SELECT fencing.grant_scope(%s, %s, 'app')", (sc, pr))
        c.close()
        args.update(to=new_d, health_dangling_roles=dangling, scopes_repaired=repaired)
        frozen = moved(a, h, rnd, mrnd, args, new_d, port, sb, n)
    except psycopg.Error as e:
        set_primary(a, new_d, port)
        args.update(step='repair')
        return h.rec('fault', args, inv, 'fail', msg=str(e))
    return move_ended(a, h, rnd, args, inv, 'ok', sb, frozen, retired=old_d)


def upgrade(a, h, rnd, conn, n, to=None, mrnd=None):
    """pg_upgrade (--link or --copy, at random) into a new cluster: of the
    same major version (the binary-upgrade path, timeline 1 again, a new
    system identifier), or, with to (a bindir), of that newer major version
    (--upgrade-to: the move operations.md's runbook describes; afterwards
    every fault runs the new version's programs, and later upgrades stay on
    it).  Like a move by dump: the clients shut out and every session ended
    first; the prepared transactions left are rolled back (pg_upgrade
    refuses them; their writes were recorded unknown); with a standby, the
    retired cluster's standby is stopped and the new cluster gets one of its
    own (moved())."""
    inv = now()
    old_d, port = primary(a)
    sb = standby_of(a) if a.standby != 'none' else None
    set_primary(a, 'none', 0)
    conn.close()
    time.sleep(0.5)
    new_d = 'data-u%d' % n
    old_bin = bindir(a) or os.path.dirname(subprocess.run(
        ['sh', '-c', 'command -v pg_ctl'], capture_output=True, text=True).stdout.strip())
    new_bin = to or old_bin
    kind = 'upgrade' if new_bin == old_bin else 'upgrade_major'
    # (copy is pg_upgrade's default: 15 has no --copy option)
    mode = mrnd.choice(['--link', 'copy']) if mrnd else '--link'
    gids = []
    info = {'checksums': 'off', 'attver': 0, 'from_version': None, 'ext': None, 'mode': mode}

    def prepared():
        c = connect(a, 'postgres', 'hist-nemesis', timeout=60, port=port)
        for (g,) in c.execute('SELECT gid FROM pg_catalog.pg_prepared_xacts').fetchall():
            c.execute("ROLLBACK PREPARED '%s'" % g)
            gids.append(g)
        info['checksums'] = c.execute('SHOW data_checksums').fetchone()[0]
        info['from_version'] = c.execute('SHOW server_version').fetchone()[0]
        if kind == 'upgrade_major' and major_of(new_bin) >= 18:
            # Debian's PostgreSQL 15 stamps an attribute option pg_attver on
            # the columns it creates, which 18 refuses: pg_upgrade fails on
            # any table (test/tap/016_upgrade_major.pl; 17 accepts it).
            # Cleared in the catalog, only that option, only on the relations
            # carried over.
            info['attver'] = c.execute(r"""
                UPDATE pg_catalog.pg_attribute a
                   SET attoptions = NULLIF(ARRAY(
                           SELECT o FROM pg_catalog.unnest(a.attoptions) o
                            WHERE o NOT LIKE 'pg\_attver=%'), '{}')
                  FROM pg_catalog.pg_class c
                 WHERE c.oid = a.attrelid
                   AND a.attoptions::text LIKE '%pg\_attver=%'
                   AND c.relnamespace NOT IN ('pg_catalog'::regnamespace,
                                              'information_schema'::regnamespace)""").rowcount
        c.close()
        return 0

    def initdb():
        # the new cluster's data checksums must be those of the old one (18's
        # initdb turns them on by default, 15's off; 15's has no option to
        # say off)
        opt = (['--data-checksums'] if info['checksums'] == 'on'
               else ['--no-data-checksums'] if major_of(new_bin) >= 18 else [])
        return as_pg(a, ['initdb', '-D', os.path.join(a.dir, new_d), '-A', 'trust',
                         '-U', 'postgres', '--no-sync'] + opt, bin_dir=new_bin, log='pg_upgrade.log')

    def update():
        # runbook step 3: a 1.4 install is updated before the first term
        c = connect(a, 'postgres', 'hist-nemesis', timeout=60, port=port)
        v0 = c.execute("SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'fencing'").fetchone()[0]
        c.execute('ALTER EXTENSION fencing UPDATE')
        v1 = c.execute("SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'fencing'").fetchone()[0]
        info['ext'] = v0 if v0 == v1 else '%s->%s' % (v0, v1)
        info['to_version'] = c.execute('SHOW server_version').fetchone()[0]
        # what fencing.health finds on the moved database (the dangling
        # roles of a dump do not arise: pg_upgrade keeps role OIDs)
        info['health'] = ['%s: %s %s' % r for r in c.execute(
            'SELECT severity, "check", object FROM fencing.health')]
        c.close()
        return 0
    # pg_upgrade's own servers run on a port of their own: the standby's
    # (stopped by then), or the second port
    uport = sb[1] if sb else a.port2
    steps = [
        ('restart', lambda: pg_ctl(a, '-m', 'fast', '-w', '-t', '60', 'restart', data=old_d)),
        ('prepared', prepared),
        ('stop', lambda: pg_ctl(a, '-m', 'fast', '-w', '-t', '60', 'stop', data=old_d)),
        ('initdb', initdb),
        ('conf', lambda: as_pg(a, ['cp', os.path.join(a.dir, old_d, 'postgresql.conf'),
                                   os.path.join(a.dir, new_d)])),
        ('own_conf', lambda: own_conf(a, new_d, port)),
        ('pg_upgrade', lambda: as_pg(a, ['pg_upgrade'] + ([mode] if mode == '--link' else []) + ['-U', 'postgres', '-b', old_bin, '-B', new_bin,
                                         '-d', os.path.join(a.dir, old_d), '-D', os.path.join(a.dir, new_d),
                                         '-p', str(uport), '-P', str(uport), '-s', a.dir],
                                     bin_dir=new_bin, log='pg_upgrade.log')),
        ('start', lambda: 0 if start_server(a, new_d, bin_dir=new_bin) else 1),
    ]
    if sb:
        steps.insert(3, ('stop_standby', lambda: pg_ctl(a, '-m', 'immediate', '-w', '-t', '60', 'stop',
                                                         data=sb[0]) if postmaster_pid(a, sb[0]) else 0))
    # runbook step 5, for every pg_upgrade (the same version too): a 1.4
    # install is updated before the first term (as 1.4 it would issue in the
    # band of timeline 1 again, which pg_upgrade starts on: after a failover
    # that lost terms, terms already returned (seed 601))
    steps.append(('update', update))
    args = {'kind': kind}
    frozen = None
    for name, step in steps:
        try:
            rc = step()
        except psycopg.Error as e:
            rc = str(e)[:200]
        if rc != 0:
            args.update(step=name, rc=rc)
            if name in ('pg_upgrade', 'start', 'initdb', 'conf', 'own_conf', 'stop_standby'):
                subprocess.run(['rm', '-rf', os.path.join(a.dir, new_d)])
                # --link: the old cluster is usable until the new one started
                start_server(a, old_d, bin_dir=old_bin)
                revive_standby(a, sb, args)
            elif name == 'update':
                # the new server runs: it is the primary now
                set_bindir(a, new_bin)
                try:
                    frozen = moved(a, h, rnd, mrnd, args, new_d, port, sb, n)
                except psycopg.Error:
                    set_primary(a, new_d, port)
                return move_ended(a, h, rnd, args, inv, 'fail', sb, frozen, retired=old_d)
            set_primary(a, old_d, port)
            return h.rec('fault', args, inv, 'fail')
    set_bindir(a, new_bin)
    args.update(to=new_d, rolled_back_prepared=gids, bindir=new_bin, **info)
    try:
        frozen = moved(a, h, rnd, mrnd, args, new_d, port, sb, n)
    except psycopg.Error as e:
        set_primary(a, new_d, port)
        args.update(step='moved', rc=str(e)[:200])
        return h.rec('fault', args, inv, 'fail')
    return move_ended(a, h, rnd, args, inv, 'ok', sb, frozen, retired=old_d)


def standby_of(a):
    """(data directory, port) of the streaming standby: DIR/standby, kept by
    the promotions and the moves (a moved cluster gets a standby of its own)."""
    try:
        with open(os.path.join(a.dir, 'standby')) as f:
            d, p = f.read().split()
            return d, int(p)
    except (OSError, ValueError):
        d, p = primary(a)
        return ('data2', a.port2) if d == 'data' else ('data', a.port)


def set_standby(a, d, port):
    tmp = os.path.join(a.dir, 'standby.tmp')
    with open(tmp, 'w') as f:
        f.write('%s %d\n' % (d, port))
    os.rename(tmp, os.path.join(a.dir, 'standby'))


def promote(a, h, rnd, conn, frozen=None, after_move=None):
    """The primary dies (kill -9), the standby is promoted; a new standby is
    made from it; fence_older_timelines() runs; then the clients follow.
    frozen: the pid of the standby's WAL receiver, stopped already (a move
    made the standby, froze it and waited for the new cluster's first term:
    the standby may have missed the claim of the clock)."""
    inv = now()
    old_d, old_p = primary(a)
    new_d, new_p = standby_of(a)
    if not postmaster_pid(a, new_d) and frozen != 'stopped':
        if frozen:
            os.kill(frozen, signal.SIGCONT)
        return h.rec('fault', {'kind': 'promote', 'mode': a.standby}, inv, 'fail', msg='no standby')
    lag = None
    r = None
    if frozen == 'stopped':
        lag = round(max(0.01, now() - (after_move or now())), 2)
    elif frozen:
        r, lag = (frozen,), round(max(0.01, now() - (after_move or now())), 2)
    elif a.standby == 'async' and rnd.random() < 0.5:
        # a lagging standby: its WAL receiver is frozen while the primary
        # goes on, then the primary dies: what was not received is lost
        try:
            c = psycopg.connect('host=%s port=%d dbname=postgres user=postgres connect_timeout=5'
                                % (a.host, new_p), autocommit=True)
            r = c.execute('SELECT pid FROM pg_catalog.pg_stat_wal_receiver').fetchone()
            c.close()
            if r and r[0]:
                lag = rnd.uniform(0.5, 3.0)
                os.kill(r[0], signal.SIGSTOP)
                time.sleep(lag)
        except (psycopg.Error, OSError) as e:
            h.rec('fault', {'kind': 'lag', 'error': str(e)}, now(), 'fail')
            r = lag = None
    pid = postmaster_pid(a, old_d)
    if conn is not None:
        conn.close()
    set_primary(a, 'none', 0)          # nobody connects until the new one is published
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if frozen == 'stopped':
        # the standby, down since before the move's first term, comes up
        # (its primary dead: it has what it had) and is promoted
        start_server(a, new_d)
    elif lag:
        os.kill(r[0], signal.SIGCONT)
    rc = pg_ctl(a, '-w', '-t', '60', 'promote', data=new_d)
    if a.standby == 'sync':
        # nothing acknowledged is lost: the clients may come at once (their
        # commits wait for the new standby)
        set_primary(a, new_d, new_p)
    time.sleep(1.0)                 # the old primary's backends see it died
    ok = rc == 0 and make_standby(a, old_d, old_p, source_port=new_p)
    set_standby(a, old_d, old_p)
    raised = 0
    try:
        # an asynchronous standby may have missed raises: every term of the
        # older timelines is fenced before a leader may connect
        # (docs/operations.md, failover)
        c = connect(a, 'postgres', 'hist-nemesis', timeout=60, port=new_p)
        c.execute("SET statement_timeout = '60s'")
        # a transaction prepared on the old primary survives the promotion and
        # holds its scope: fence_older_timelines() would wait for it, and its
        # client cannot come to finish it yet (its outcome was recorded unknown)
        gids = [g for (g,) in c.execute('SELECT gid FROM pg_catalog.pg_prepared_xacts')]
        for g in gids:
            try:
                c.execute("ROLLBACK PREPARED '%s'" % g)
            except psycopg.Error:
                pass        # its client, back already (synchronous: at once), ended it
        try:
            # 'moves' here: the promoted standby never saw the moved cluster's
            # claim of the clock (its next term claims it again)
            clock = c.execute('SELECT state FROM fencing.clock_state()').fetchone()[0]
        except psycopg.Error:
            clock = None        # 1.4: no clock_state()
        raised, converged = fence_older(c)
        tl = c.execute('SELECT timeline FROM fencing.clock_timeline()').fetchone()[0]
        c.close()
        set_primary(a, new_d, new_p)
    except psycopg.Error as e:
        return h.rec('fault', {'kind': 'promote', 'mode': a.standby}, inv, 'fail', msg=str(e))
    return h.rec('fault', {'kind': 'promote', 'mode': a.standby, 'lagging': lag, 'timeline': tl,
                           'after_move': bool(frozen), 'from': old_d, 'to': new_d,
                           'clock_state': clock,
                           'standby_was': ('stopped' if frozen == 'stopped' else
                                           'wal receiver frozen' if frozen else None),
                           'fenced_older_converged': converged,
                           'rolled_back_prepared': gids,
                           'fenced_older': raised, 'external': EXTERNAL}, inv, 'ok' if ok else 'fail')


def nemesis(a, client_pids):
    rnd = random.Random(a.seed * 1000 + 999)
    h = Hist(os.path.join(a.dir, 'history', 'nemesis.jsonl'), 'nemesis')
    end = now() + a.seconds
    sabotage_at = now() + a.seconds * 0.4 if a.sabotage else None
    update_at = (now() + a.seconds * rnd.uniform(0.2, 0.6)
                 if os.path.exists(os.path.join(a.dir, 'ext-from')) else None)
    conn = None
    revoked = {}
    kinds = ['pause', 'pause', 'pause', 'kill_backend', 'kill_postmaster', 'restart',
             'alter_owner', 'revoke_grant', 'revoke_grant', 'reset_mark', 'reset_mark']
    if a.citus:
        kinds += ['citus_disable_activate', 'citus_disable_activate', 'citus_remove_add',
                  'citus_remove_add', 'citus_move', 'citus_move', 'citus_move']
    elif a.standby != 'none':
        # with a standby the moves too: the moved cluster gets a standby of
        # its own, which a later promote fails over to
        kinds += ['promote', 'dump_restore', 'upgrade']
    else:
        kinds += ['dump_restore', 'upgrade']
    moves = 0
    # --upgrade-to: the move to the newer major version, once, at a seeded
    # time (a Random of its own: the other choices replay as without it)
    major_at = (now() + a.seconds * random.Random(a.seed * 1000 + 998).uniform(0.25, 0.5)
                if a.upgrade_to else None)
    # the moves' own choices (the dump's source, a paused standby, --link or
    # --copy, the new standby before or after the first term, a failover right
    # after the move): a Random of their own, so that the other faults'
    # choices replay as before
    mrnd = random.Random(a.seed * 1000 + 997)
    weights = [k for k in kinds if a.faults == 'all' or k in a.faults.split(',')]
    time.sleep(rnd.uniform(1, 3))
    while now() < end - 3:
        try:
            if conn_dead(conn):
                conn = connect(a, 'postgres', 'hist-nemesis', timeout=60)
        except psycopg.Error:
            h.rec('fault', {'kind': 'reconnect'}, now(), 'fail')
            start_server(a)
            continue
        if sabotage_at and now() >= sabotage_at:
            sabotage_at = None
            inv = now()
            try:
                conn.execute("SELECT fencing.unprotect('w_s0')")
                h.rec('fault', {'kind': 'sabotage_unprotect', 'table': 'w_s0'}, inv, 'ok')
            except psycopg.Error as e:
                h.rec('fault', {'kind': 'sabotage_unprotect'}, inv, 'fail', sqlstate=e.sqlstate)
            continue
        if update_at and now() >= update_at:
            update_at = None
            inv = now()
            try:
                conn.execute('ALTER EXTENSION fencing UPDATE')
                v = conn.execute("SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'fencing'").fetchone()[0]
                h.rec('fault', {'kind': 'ext_update', 'to': v}, inv, 'ok')
            except psycopg.Error as e:
                res, st, msg = classify(e)
                h.rec('fault', {'kind': 'ext_update'}, inv, res, sqlstate=st, msg=msg)
            continue
        if major_at and now() >= major_at:
            major_at = None
            moves += 1
            try:
                upgrade(a, h, rnd, conn, moves, to=a.upgrade_to, mrnd=mrnd)
            except (psycopg.Error, OSError) as e:
                h.rec('fault', {'kind': 'upgrade_major'}, now(), 'fail', msg=str(e))
            continue
        kind = rnd.choice(weights) if weights else None
        inv = now()
        try:
            if kind == 'pause':
                i = rnd.randrange(len(client_pids))
                d = rnd.uniform(0.3, 4.0)
                os.kill(client_pids[i], signal.SIGSTOP)
                time.sleep(d)
                os.kill(client_pids[i], signal.SIGCONT)
                h.rec('fault', {'kind': 'pause', 'client': 'c%d' % i, 'seconds': round(d, 2)}, inv, 'ok')
            elif kind == 'kill_backend':
                pids = [r[0] for r in conn.execute(
                    "SELECT pid FROM pg_catalog.pg_stat_activity WHERE application_name LIKE 'hist-c%'")]
                if pids:
                    p = rnd.choice(pids)
                    os.kill(p, signal.SIGKILL)
                    conn.close()
                    h.rec('fault', {'kind': 'kill_backend', 'pid': p}, inv, 'ok')
            elif kind == 'kill_postmaster':
                p = postmaster_pid(a)
                conn.close()
                if p:
                    os.kill(p, signal.SIGKILL)
                    time.sleep(rnd.uniform(0.2, 2.0))
                    ok = start_server(a)
                    h.rec('fault', {'kind': 'kill_postmaster', 'pid': p}, inv, 'ok' if ok else 'fail')
            elif kind == 'restart':
                conn.close()
                m = rnd.choice(['fast', 'immediate'])
                rc = pg_ctl(a, '-m', m, '-w', '-t', '30', 'stop')
                ok = start_server(a)
                h.rec('fault', {'kind': 'restart', 'mode': m}, inv, 'ok' if ok and rc == 0 else 'fail')
            elif kind == 'promote':
                promote(a, h, rnd, conn)
            elif kind == 'citus_disable_activate':
                citus_disable_activate(a, h, rnd, conn)
            elif kind == 'citus_remove_add':
                citus_remove_add(a, h, rnd, conn)
            elif kind == 'citus_move':
                citus_move(a, h, rnd, conn)
            elif kind == 'dump_restore':
                moves += 1
                dump_restore(a, h, rnd, conn, moves, mrnd=mrnd)
            elif kind == 'upgrade':
                moves += 1
                upgrade(a, h, rnd, conn, moves, mrnd=mrnd)
            elif kind == 'alter_owner':
                s = rnd.choice(SCOPES)
                new = rnd.choice(['owner_a', 'owner_b'])
                conn.execute('SELECT fencing.alter_scope_owner(%s, %s)', (s, new))
                h.rec('fault', {'kind': 'alter_owner', 'scope': s, 'owner': new}, inv, 'ok')
            elif kind == 'revoke_grant':
                s = rnd.choice(SCOPES)
                p = rnd.choice(['lead', 'write'])
                d = rnd.uniform(0.5, 4.0)
                conn.execute("SELECT fencing.revoke_scope(%s, %s, 'app')", (s, p))
                revoked[(s, p)] = True
                time.sleep(d)
                for attempt in range(10):
                    try:
                        conn.execute("SELECT fencing.grant_scope(%s, %s, 'app')", (s, p))
                        break
                    except psycopg.Error as e:
                        # on Citus the grant is fed to every node and may be
                        # cancelled as a deadlock: granted back, not left revoked
                        if e.sqlstate != '40P01' or attempt == 9:
                            raise
                        time.sleep(0.3)
                del revoked[(s, p)]
                h.rec('fault', {'kind': 'revoke_grant', 'scope': s, 'priv': p, 'seconds': round(d, 2)}, inv, 'ok')
            elif kind == 'reset_mark':
                s = rnd.choice(SCOPES)
                m = conn.execute('SELECT fencing.committed_mark(%s)', (s,)).fetchone()[0] or 0
                to = max(0, m - rnd.randint(1, 3))
                inv = now()
                try:
                    prev = conn.execute('SELECT fencing.reset_mark(%s, %s)', (s, to)).fetchone()[0]
                    h.rec('reset_mark', {'scope': s, 'mark': to}, inv, 'ok', value=prev)
                except psycopg.Error as e:
                    res, st, msg = classify(e)
                    h.rec('reset_mark', {'scope': s, 'mark': to}, inv, res, sqlstate=st, msg=msg)
        except (psycopg.Error, OSError) as e:
            res, st, msg = classify(e) if isinstance(e, psycopg.Error) else ('fail', None, str(e))
            h.rec('fault', {'kind': kind}, inv, res, sqlstate=st, msg=msg)
        time.sleep(rnd.uniform(0.5, a.fault_gap))
    # leave everything granted and running for the final reads
    for (s, p) in list(revoked):
        try:
            if conn_dead(conn):
                conn = connect(a, 'postgres', 'hist-nemesis', timeout=60)
            conn.execute("SELECT fencing.grant_scope(%s, %s, 'app')", (s, p))
        except psycopg.Error:
            pass


# ------------------------------------------------------------------ citus
# --citus: the coordinator is DIR/data on --port (the clients, the monitor and
# every term go through it), the workers DIR/w<i>/data on --workers, all on
# 127.0.0.1 (Citus's nodes connect by TCP).  The history's tables are
# hash-distributed on their row id k (colocated: a shard move moves one shard
# of each); each node keeps a local audit table of its own, filled by the
# shards' triggers with the statement's tag (SET LOCAL, propagated), merged
# at the end in the order of the changes' times.  The nemesis follows
# docs/citus.md's runbooks for each operation.
WORKER_DATA = 'w%d/data'


def wconn(a, port, timeout=30.0):
    end = now() + timeout
    while True:
        try:
            return psycopg.connect('host=127.0.0.1 port=%d dbname=postgres user=postgres '
                                   'application_name=hist-nemesis connect_timeout=5' % port,
                                   autocommit=True)
        except psycopg.Error:
            if now() > end:
                raise
            time.sleep(0.3)


def worker_index(a, port):
    return a.workers.index(port) + 1


def start_worker(a, port):
    i = worker_index(a, port)
    log = os.path.join(a.dir, 'w%d' % i, 'server.log')
    end = now() + 60
    while now() < end:
        if pg_ctl(a, '-l', log, '-w', '-t', '30', 'start', data=WORKER_DATA % i) == 0:
            return True
        time.sleep(0.5)
    return False


def worker_up(a, port):
    return pg_ctl(a, 'status', data=WORKER_DATA % worker_index(a, port)) == 0


def citus_setup(a):
    c = connect(a, 'postgres', 'hist-setup')
    c.execute('CREATE EXTENSION citus')
    for w in a.workers:
        wc = wconn(a, w)
        wc.execute('CREATE EXTENSION citus')
        wc.close()
    c.execute("SELECT citus_set_coordinator_host('127.0.0.1', %s)", (a.port,))
    for w in a.workers:
        c.execute("SELECT citus_add_node('127.0.0.1', %s)", (w,))
    # Citus propagates the extension and the roles to the workers
    c.execute('CREATE EXTENSION fencing')
    c.execute(ROLES)
    # the audit table: a local table on every node (the shards' triggers
    # write into their node's), not Citus's
    for p in [a.port] + a.workers:
        wc = c if p == a.port else wconn(a, p)
        wc.execute('SET citus.enable_ddl_propagation = off')
        wc.execute(AUDIT_TABLE)
        wc.execute('RESET citus.enable_ddl_propagation')
        if wc is not c:
            wc.close()
    c.execute(AUDIT_FN)
    create_scopes(c)
    for s in SCOPES:
        for t, how in scope_tables(s):
            create_history_table(c, s, t, how)
            c.execute("SELECT create_distributed_table(%s, 'k')", (t,))
            c.execute('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO app' % t)
    # docs/citus.md: scope fencing on the workers needs the marks distributed
    c.execute('SELECT fencing.distribute_marks()')
    c.close()


def active_workers(conn):
    return [r[0] for r in conn.execute(
        "SELECT nodeport FROM pg_catalog.pg_dist_node WHERE isactive AND noderole = 'primary' "
        "AND groupid <> 0 ORDER BY nodeport")]


def shard_groups(conn):
    """(shard of w_s0, its worker's port): one per group of colocated shards."""
    return [tuple(r) for r in conn.execute(
        "SELECT s.shardid, n.nodeport FROM pg_catalog.pg_dist_shard AS s "
        "JOIN pg_catalog.pg_dist_placement AS p USING (shardid) "
        "JOIN pg_catalog.pg_dist_node AS n USING (groupid) "
        "WHERE s.logicalrelid = 'public.w_s0'::regclass ORDER BY 1")]


def citus_step(conn, steps, name, sql, params=None, tries=1):
    """One step of a runbook, recorded in steps; raises on failure.  With
    tries, retried while the session lives: under the clients' load Citus
    may cancel distribute_marks() or citus_remove_node() as a (distributed)
    deadlock (40P01); each attempt is recorded."""
    for i in range(tries):
        t = now()
        try:
            r = conn.execute(sql, params).fetchone() if 'SELECT' in sql else conn.execute(sql, params)
            steps.append({'step': name, 'ok': True, 'secs': round(now() - t, 2)})
            return r
        except psycopg.Error as e:
            steps.append({'step': name, 'ok': False, 'sqlstate': e.sqlstate, 'msg': str(e)[:200]})
            if i == tries - 1 or conn_dead(conn):
                raise
            time.sleep(0.5)


def move_group(conn, steps, shard, src, dst, mode):
    citus_step(conn, steps, 'move %d %d->%d %s' % (shard, src, dst, mode),
               "SELECT citus_move_shard_placement(%s, '127.0.0.1', %s, '127.0.0.1', %s, "
               "shard_transfer_mode => %s)", (shard, src, dst, mode))


def drain(conn, rnd, steps, args, w, ws):
    """Every shard group on worker w moved to the other workers (Citus
    refuses to disable or remove a node holding the only placement of a
    shard: docs/citus.md, move its shards away first)."""
    groups = shard_groups(conn)
    count = {x: sum(1 for g in groups if g[1] == x) for x in ws}
    for shard, src in groups:
        if src != w:
            continue
        dst = min((x for x in ws if x != w), key=lambda x: (count[x], rnd.random()))
        mode = rnd.choice(['block_writes', 'force_logical'])
        move_group(conn, steps, shard, w, dst, mode)
        count[dst] += 1
        args['drained'].append(mode)
    citus_step(conn, steps, 'cleanup', 'CALL citus_cleanup_orphaned_resources()')


def move_in(conn, rnd, steps, args, w):
    """Half the time a shard group moves onto worker w after it came back
    and before the feed (docs/citus.md: "or let a shard move do it"): the
    clients' writes by scope to it must be refused there (55000, its marks
    are not current) until distribute_marks() or a takeover feeds it."""
    if rnd.random() >= 0.5:
        return
    groups = [g for g in shard_groups(conn) if g[1] != w]
    if not groups:
        return
    shard, src = rnd.choice(groups)
    mode = rnd.choice(['block_writes', 'force_logical'])
    # (a node added again lacks the reference tables: Citus refuses the move)
    citus_step(conn, steps, 'replicate_reference_tables',
               "SELECT replicate_reference_tables('block_writes')", tries=5)
    move_group(conn, steps, shard, src, w, mode)
    args['moved_in_before_feed'] = mode


def citus_disable_activate(a, h, rnd, conn):
    """docs/citus.md: a worker (its shards moved away first) goes down,
    stopped as an operator would, is disabled so that takeovers commit
    without it, stays away a while, comes back up, is activated, gets the
    reference tables and the marks."""
    inv = now()
    steps = []
    ws = active_workers(conn)
    if len(ws) < 2:
        return h.rec('fault', {'kind': 'citus_disable_activate', 'why': 'fewer than 2 active workers'}, inv, 'fail')
    w = rnd.choice(ws)
    m = rnd.choice(['fast', 'immediate'])
    down = rnd.uniform(1.0, 5.0)
    args = {'kind': 'citus_disable_activate', 'worker': w, 'stop': m, 'seconds': round(down, 2),
            'drained': [], 'steps': steps}
    conn.execute("SET statement_timeout = '120s'")
    ok = True
    try:
        drain(conn, rnd, steps, args, w, ws)
    except psycopg.Error:
        if conn_dead(conn):
            raise
        return h.rec('fault', args, inv, 'fail')
    rc = pg_ctl(a, '-m', m, '-w', '-t', '30', 'stop', data=WORKER_DATA % worker_index(a, w))
    steps.append({'step': 'stop', 'ok': rc == 0})
    try:
        citus_step(conn, steps, 'citus_disable_node',
                   "SELECT citus_disable_node('127.0.0.1', %s, synchronous => true)", (w,), tries=5)
    except psycopg.Error:
        ok = False
        if conn_dead(conn):
            raise
    args['disabled_at'] = now()
    time.sleep(down)
    steps.append({'step': 'start', 'ok': start_worker(a, w)})
    try:
        citus_step(conn, steps, 'citus_activate_node', "SELECT citus_activate_node('127.0.0.1', %s)", (w,), tries=5)
        citus_step(conn, steps, 'replicate_reference_tables',
                   "SELECT replicate_reference_tables('block_writes')", tries=5)
        move_in(conn, rnd, steps, args, w)
        citus_step(conn, steps, 'distribute_marks', 'SELECT fencing.distribute_marks()', tries=10)
    except psycopg.Error:
        ok = False
        if conn_dead(conn):
            raise
    return h.rec('fault', args, inv, 'ok' if ok else 'fail')


def citus_remove_add(a, h, rnd, conn):
    """docs/citus.md: a worker's shards are moved away, it is removed (it
    keeps running), added again, and the marks distributed."""
    inv = now()
    steps = []
    ws = active_workers(conn)
    if len(ws) < 2:
        return h.rec('fault', {'kind': 'citus_remove_add', 'why': 'fewer than 2 active workers'}, inv, 'fail')
    w = rnd.choice(ws)
    away = rnd.uniform(0.5, 3.0)
    args = {'kind': 'citus_remove_add', 'worker': w, 'seconds': round(away, 2), 'drained': [], 'steps': steps}
    conn.execute("SET statement_timeout = '120s'")
    ok = True
    try:
        drain(conn, rnd, steps, args, w, ws)
        citus_step(conn, steps, 'citus_remove_node', "SELECT citus_remove_node('127.0.0.1', %s)", (w,), tries=5)
        args['removed_at'] = now()
        time.sleep(away)
        citus_step(conn, steps, 'citus_add_node', "SELECT citus_add_node('127.0.0.1', %s)", (w,), tries=5)
        move_in(conn, rnd, steps, args, w)
        citus_step(conn, steps, 'distribute_marks', 'SELECT fencing.distribute_marks()', tries=10)
    except psycopg.Error:
        ok = False
        if conn_dead(conn):
            raise
        # leave the node in the cluster whatever failed
        try:
            if w not in [r[0] for r in conn.execute('SELECT nodeport FROM pg_catalog.pg_dist_node')]:
                citus_step(conn, steps, 'citus_add_node', "SELECT citus_add_node('127.0.0.1', %s)", (w,), tries=5)
            citus_step(conn, steps, 'distribute_marks', 'SELECT fencing.distribute_marks()', tries=10)
        except psycopg.Error:
            pass
    return h.rec('fault', args, inv, 'ok' if ok else 'fail')


def citus_move(a, h, rnd, conn):
    """A group of colocated shards moved to another worker, blocking writes
    or by logical replication."""
    inv = now()
    steps = []
    ws = active_workers(conn)
    groups = [g for g in shard_groups(conn) if g[1] in ws]
    if len(ws) < 2 or not groups:
        return h.rec('fault', {'kind': 'citus_move', 'why': 'nothing to move'}, inv, 'fail')
    shard, src = rnd.choice(groups)
    dst = rnd.choice([x for x in ws if x != src])
    mode = rnd.choice(['block_writes', 'force_logical'])
    args = {'kind': 'citus_move', 'mode': mode, 'shard': shard, 'from': src, 'to': dst, 'steps': steps}
    conn.execute("SET statement_timeout = '120s'")
    try:
        move_group(conn, steps, shard, src, dst, mode)
    except psycopg.Error:
        if conn_dead(conn):
            raise
        return h.rec('fault', args, inv, 'fail')
    return h.rec('fault', args, inv, 'ok')


def citus_final(a, c):
    """Every worker up and in the cluster, the marks fed, Citus's prepared
    transactions of dead coordinator sessions recovered, before the reads."""
    for w in a.workers:
        if not worker_up(a, w):
            start_worker(a, w)
    c.execute("SET statement_timeout = '120s'")
    known = {r[0]: r[1] for r in c.execute('SELECT nodeport, isactive FROM pg_catalog.pg_dist_node')}
    for w in a.workers:
        if w not in known:
            c.execute("SELECT citus_add_node('127.0.0.1', %s)", (w,))
        elif not known[w]:
            c.execute("SELECT citus_activate_node('127.0.0.1', %s)", (w,))
    c.execute('SELECT fencing.distribute_marks()')
    c.execute('SELECT recover_prepared_transactions()')


def citus_audit(a):
    """The audit tables of every node (a shard's changes are where the shard
    was when they were made), merged: a row's changes in commit order (a
    later writer of the row waited for the earlier one's commit before its
    AFTER trigger ran, and every node reads one clock)."""
    rows = []
    for p in [a.port] + a.workers:
        wc = wconn(a, p)
        rows += [r for r in wc.execute(
            'SELECT at, n, %s, tbl, kind, k, payload, tok, stmt FROM public.hist_audit' % p)]
        wc.close()
    rows.sort(key=lambda r: (r[0], r[2], r[1]))
    return [dict(zip(('n', 'tbl', 'kind', 'k', 'payload', 'tok', 'stmt'), (i,) + tuple(r[3:])))
            for i, r in enumerate(rows, 1)]


# ------------------------------------------------------------------ final dump
def final(a):
    if not postmaster_pid(a) or pg_ctl(a, 'status') != 0:
        start_server(a)
    c = connect(a, 'postgres', 'hist-final')
    if a.standby == 'sync':
        # the standby may be down: nothing below may wait for it
        c.execute('ALTER SYSTEM RESET synchronous_standby_names')
        c.execute('SELECT pg_catalog.pg_reload_conf()')
    # prepared transactions nobody finished: roll them back (their writes
    # were recorded unknown)
    for (gid,) in c.execute('SELECT gid FROM pg_catalog.pg_prepared_xacts').fetchall():
        c.execute("ROLLBACK PREPARED '%s'" % gid)
    if a.citus:
        citus_final(a, c)
    h = Hist(os.path.join(a.dir, 'history', 'final.jsonl'), 'final')
    for s in SCOPES + FILLERS:
        inv = now()
        v = c.execute('SELECT fencing.committed_mark(%s)', (s,)).fetchone()[0]
        h.rec('read_mark', {'scope': s}, inv, 'ok', value=v)
    if a.citus:
        audit = citus_audit(a)
    else:
        audit = [dict(zip(('n', 'tbl', 'kind', 'k', 'payload', 'tok', 'stmt'), r)) for r in c.execute(
            'SELECT n, tbl, kind, k, payload, tok, stmt FROM hist_audit ORDER BY n')]
    tables = {}
    for s in SCOPES:
        for t in ['w_' + s, 'r_' + s] + ([DECLARED_TABLE[s]] if s in DECLARED_TABLE else []):
            tables[t] = [list(r) for r in c.execute('SELECT k, payload, tok FROM %s ORDER BY k' % t)]
    with open(os.path.join(a.dir, 'final.json'), 'w') as f:
        json.dump({'audit': audit, 'tables': tables}, f)
    c.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument('role', choices=['run', 'client', 'monitor', 'nemesis'])
    p.add_argument('--dir', required=True)
    p.add_argument('--host', required=True)
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--seed', type=int, required=True)
    p.add_argument('--seconds', type=float, default=60)
    p.add_argument('--clients', type=int, default=6)
    p.add_argument('--id', type=int, default=0)
    p.add_argument('--max-prepared', type=int, default=10)
    p.add_argument('--faults', default='all')
    p.add_argument('--fault-gap', type=float, default=3.0)
    p.add_argument('--sabotage', action='store_true')
    p.add_argument('--pids', default='')
    p.add_argument('--port2', type=int, default=0)
    p.add_argument('--standby', choices=['none', 'sync', 'async'], default='none')
    p.add_argument('--upgrade-to', default='')
    p.add_argument('--citus', action='store_true')
    p.add_argument('--workers', default='')     # --citus: the workers' ports
    a = p.parse_args()
    a.workers = [int(x) for x in a.workers.split(',') if x]
    if a.citus:
        a.max_prepared = 0      # a client's PREPARE TRANSACTION: Citus refuses it for distributed writes
    if a.role == 'client':
        return client(a, a.id)
    if a.role == 'monitor':
        return monitor(a)
    if a.role == 'nemesis':
        return nemesis(a, [int(x) for x in a.pids.split(',') if x])
    # run: set up, start the processes, wait for them, dump the final state
    os.makedirs(os.path.join(a.dir, 'history'), exist_ok=True)
    if a.standby != 'none':
        c = connect(a, 'postgres', 'hist-setup')
        if a.standby == 'sync':
            c.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
            c.execute('SELECT pg_catalog.pg_reload_conf()')
        c.close()
        set_primary(a, 'data', a.port)
        set_standby(a, 'data2', a.port2)
        if not make_standby(a, 'data2', a.port2):
            print('the standby did not start', file=sys.stderr)
            return 1
    setup(a)
    me = [sys.executable, os.path.abspath(__file__)]
    common = ['--dir', a.dir, '--host', a.host, '--port', str(a.port), '--seed', str(a.seed),
              '--port2', str(a.port2), '--standby', a.standby, '--upgrade-to', a.upgrade_to,
              '--seconds', str(a.seconds), '--max-prepared', str(a.max_prepared)]
    if a.citus:
        common += ['--citus', '--workers', ','.join(str(w) for w in a.workers)]
    procs = []
    for i in range(a.clients):
        procs.append(subprocess.Popen(me + ['client', '--id', str(i)] + common))
    procs.append(subprocess.Popen(me + ['monitor'] + common))
    nem = subprocess.Popen(me + ['nemesis', '--faults', a.faults, '--fault-gap', str(a.fault_gap),
                                 '--pids', ','.join(str(x.pid) for x in procs[:a.clients])]
                           + (['--sabotage'] if a.sabotage else []) + common)
    procs.append(nem)
    deadline = now() + a.seconds + 90
    rc = 0
    for pr in procs:
        try:
            pr.wait(timeout=max(1, deadline - now()))
        except subprocess.TimeoutExpired:
            os.kill(pr.pid, signal.SIGCONT)
            pr.kill()
            pr.wait()
            rc = 1
        if pr.returncode:
            rc = 1
    for pr in procs[:a.clients]:
        try:
            os.kill(pr.pid, signal.SIGCONT)
        except OSError:
            pass
    final(a)
    return rc


if __name__ == '__main__':
    sys.exit(main() or 0)
