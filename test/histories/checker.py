#!/usr/bin/python3
# test/histories/checker.py: judges a recorded history of the fence.
#
#   checker.py DIR         reads DIR/history/*.jsonl and DIR/final.json (hist.py)
#   checker.py --self-test feeds it synthetic histories, one per invariant with
#                          a violation injected (each must be reported) and
#                          clean ones (none may be)
#
# Operations are judged by real time: A precedes B when A completed before B
# was invoked (CLOCK_MONOTONIC, shared by all processes).  Only acknowledged
# outcomes count: "ok" happened, "fail" did not, "unknown" (the connection
# died before the commit was acknowledged) is neither.  Reports, each with the
# minimal excerpt of the history that shows it:
#   I1  a term returned twice for a scope, or a term not above one returned
#       (completed) before it was invoked;
#   I2  a mark read lower than a raise acknowledged, or than a mark read
#       (unless a promotion may lie between: a read may see a commit that no
#       standby confirmed yet), before the read was invoked, with no
#       reset_mark of that scope that may lie
#       between (a reset invoked before the read completed and completed
#       after the raise or read was invoked);
#   I3  a write acknowledged as committed with a token below a mark raised by
#       a term, takeover or write acknowledged before the write was invoked
#       (again unless a reset may lie between);
#   I4  an acknowledged write that carried no token and changed a row;
#   I5  a change in the audit table (every committed row change, tagged with
#       the statement that made it) or the final tables made by a statement
#       that was rejected, rolled back to a savepoint, or whose transaction
#       failed;
#   LOST a change acknowledged as committed (synchronous_commit on) missing
#       from the audit table (durability: not one of I1-I5, reported beside).
import bisect
import heapq
import json
import os
import sys
from collections import defaultdict

RAISES = ('next_epoch', 'acquire_lease', 'takeover')


def load(d):
    hist = []
    hd = os.path.join(d, 'history')
    for fn in sorted(os.listdir(hd)):
        if fn.endswith('.jsonl'):
            with open(os.path.join(hd, fn)) as f:
                for line in f:
                    line = line.strip()
                    if line:
                        try:
                            hist.append(json.loads(line))
                        except ValueError:
                            pass   # a line cut by kill -9 of its writer
    final = {'audit': [], 'tables': {}}
    fp = os.path.join(d, 'final.json')
    if os.path.exists(fp):
        with open(fp) as f:
            final = json.load(f)
    return hist, final


def term_of(op):
    """The term an ok op returned, or None."""
    if op['result'] != 'ok':
        return None
    if op['op'] == 'next_epoch':
        return op.get('value')
    if op['op'] == 'acquire_lease':
        v = op.get('value')
        return v[1] if v and v[0] else None
    return None


def wrote(op):
    """Statements of an ok write that changed rows (committed)."""
    return [s for s in op['args'].get('stmts', [])
            if s.get('result') == 'ok' and (s.get('rows') or 0) > 0]


def is_row(op):
    """A write to a table fenced per row only (r_*): it raises no scope's mark."""
    return bool(op['args'].get('rowmode'))


def raise_of(op):
    """(scope, value) of the mark an acknowledged op raised the scope to, at least."""
    if op['result'] != 'ok':
        return None
    t = term_of(op)
    if t is not None:
        return op['args']['scope'], t
    if op['op'] == 'takeover':
        return op['args']['scope'], op['args']['token']
    if op['op'] == 'write' and op['args'].get('token') is not None and wrote(op) and not is_row(op):
        return op['args']['scope'], op['args']['token']
    return None


def short(op):
    keep = {k: op[k] for k in ('proc', 'op', 'result', 'value', 'sqlstate') if k in op}
    a = dict(op.get('args', {}))
    if 'stmts' in a:
        a['stmts'] = [{k: s[k] for k in ('id', 'kind', 'k', 'result', 'rows', 'sqlstate') if k in s}
                      for s in a['stmts']]
    keep['args'] = a
    keep['inv'] = round(op['inv'], 3)
    keep['cmp'] = round(op['cmp'], 3)
    return json.dumps(keep, sort_keys=True)


class Resets:
    """reset_mark calls per scope (ok or unknown: either may have lowered it)."""
    def __init__(self, hist):
        self.by = defaultdict(list)
        for op in hist:
            if op['op'] == 'reset_mark' and op['result'] in ('ok', 'unknown'):
                self.by[op['args']['scope']].append(op)
            # an asynchronous standby promoted may lack raises of scopes of
            # external tokens (the terms of issued scopes are fenced by
            # fence_older_timelines()); so may a cluster restored from a dump
            # of a standby whose replay was paused (a lossy move)
            if lossy(op):
                for sc in op['args'].get('external', []):
                    self.by[sc].append(op)
        # a move of the application's data alone (hist.py dump_restore,
        # form 'schema' or 'rows') carries no mark: every scope starts again
        # on the new cluster (docs/operations.md), as after a reset of each
        self.marks_lost = [op for op in hist if marks_lost(op)]
        self.async_promotions = [op for op in hist if lossy(op)]
        # any promotion may lose a raise that no client saw acknowledged,
        # and a read may have seen it: PostgreSQL makes a commit visible on
        # the primary before the synchronous standby confirms it (and after
        # a crash, recovery replays commits the standby never confirmed)
        self.promotions = [op for op in hist if op['op'] == 'fault'
                           and (op['args'].get('kind') == 'promote' or lossy(op))]

    def of(self, scope):
        """What may lower scope's mark: its resets, and the moves that
        carried no mark."""
        return self.by.get(scope, []) + self.marks_lost


def marks_lost(op):
    """A move that carried the application's tables but not the extension's
    (pg_dump -n, or -a into a schema the migrations made): the scopes'
    marks are not in it, whether the move ended ok or failed part-way."""
    return (op['op'] == 'fault' and op['args'].get('kind') == 'dump_restore'
            and op['args'].get('form') in ('schema', 'rows'))


def lossy(op):
    """A fault after which the primary may lack commits that were
    acknowledged: an asynchronous promotion, or a move (dump_restore) whose
    dump came from a standby with its replay paused (hist.py move_source).
    A move from the primary, or from a standby that replayed everything
    first, loses nothing and excuses nothing."""
    if op['op'] != 'fault':
        return False
    if op['args'].get('kind') == 'promote':
        return op['args'].get('mode') == 'async'
    return bool(op['args'].get('lossy'))


def sweep(items, queries, excusers):
    """For each query (op, value), in order of invocation: the highest item
    (value, op) completed before the query was invoked whose value is above
    the query's, unless an excuser (a reset, a promotion) may lie between:
    one invoked before the query completed (it may have committed before the
    query's own check, anywhere in its span) and completed after the item
    was invoked.  Yields (query op, (value, item op)).  Each query's bound
    (the latest completion of the excusers invoked before it completed) is
    found by bisection; items it excuses are set aside for that query only
    (a later query with a shorter span may have a lower bound), which costs
    little: excusers are rare."""
    items = sorted(items, key=lambda x: x[1]['cmp'])
    queries = sorted(queries, key=lambda x: x[0]['inv'])
    excusers = sorted(excusers, key=lambda x: x['inv'])
    ex_inv = [e['inv'] for e in excusers]
    ex_cmp_max, m = [], float('-inf')
    for e in excusers:
        m = max(m, e['cmp'])
        ex_cmp_max.append(m)
    heap, i, n = [], 0, 0
    for q, qval in queries:
        k = bisect.bisect_left(ex_inv, q['cmp'])
        bound = ex_cmp_max[k - 1] if k > 0 else float('-inf')
        while i < len(items) and items[i][1]['cmp'] < q['inv']:
            n += 1
            heapq.heappush(heap, (-items[i][0], n, items[i][1]))
            i += 1
        aside = []
        while heap and heap[0][2]['inv'] < bound:
            aside.append(heapq.heappop(heap))
        if heap and -heap[0][0] > qval:
            yield q, (-heap[0][0], heap[0][2])
        for x in aside:
            heapq.heappush(heap, x)


def check(hist, final):
    v = []   # (invariant, text, [ops])
    resets = Resets(hist)
    by_inv = sorted(hist, key=lambda o: o['inv'])

    # I1: terms, per scope
    terms = defaultdict(list)
    for op in hist:
        t = term_of(op)
        if t is not None:
            terms[op['args']['scope']].append((t, op))
    for scope, ts in terms.items():
        seen = {}
        for t, op in ts:
            if t in seen:
                v.append(('I1', 'scope %s: term %d returned twice' % (scope, t), [seen[t], op]))
            else:
                seen[t] = op
        # each term above every term that completed before it was invoked
        ts_c = sorted(ts, key=lambda x: x[1]['cmp'])
        best = None   # highest term among those completed so far
        j = 0
        for t, op in sorted(ts, key=lambda x: x[1]['inv']):
            while j < len(ts_c) and ts_c[j][1]['cmp'] < op['inv']:
                if best is None or ts_c[j][0] > best[0]:
                    best = ts_c[j]
                j += 1
            if best is not None and t <= best[0] and best[1] is not op and t != best[0]:
                v.append(('I1', 'scope %s: term %d not above term %d returned before it was invoked'
                          % (scope, t, best[0]), [best[1], op]))

    # raises per scope, sorted by completion
    raises = defaultdict(list)
    for op in hist:
        r = raise_of(op)
        if r:
            raises[r[0]].append((r[1], op))
    for s in raises:
        raises[s].sort(key=lambda x: x[1]['cmp'])

    # I2: marks read (monitor, final) against earlier reads and raises
    reads = defaultdict(list)
    for op in hist:
        if op['op'] == 'read_mark' and op['result'] == 'ok':
            reads[op['args']['scope']].append(op)
    for scope, rs in reads.items():
        queries = [(r, r.get('value') or 0) for r in rs]
        # a scope read as unknown after an asynchronous promotion was made on
        # the lost timeline (its first term): fence_older_timelines() lifts
        # only the scopes the promoted server knows; its next term comes from
        # the new timeline's band, above every term of the lost one (I1)
        known = [x for x in queries if x[0].get('value') is not None]
        unknown = [x for x in queries if x[0].get('value') is None]
        for qs, ex in ((known, resets.of(scope)),
                       (unknown, resets.of(scope) + resets.async_promotions)):
            for q, (val, it) in sweep(raises.get(scope, []), qs, ex):
                text = 'scope %s: mark read as %s after a raise to %d was acknowledged' % (
                    scope, q.get('value'), val)
                v.append(('I2', text, [it, q]))
        # a read against an earlier read: also unless a promotion may lie
        # between (what was read may have been a raise never acknowledged)
        for q, (val, it) in sweep([(r.get('value') or 0, r) for r in rs], queries,
                                  resets.of(scope) + resets.promotions):
            text = 'scope %s: mark read as %d after it was read as %d' % (scope, q.get('value') or 0, val)
            v.append(('I2', text, [it, q]))

    # I3: acknowledged writes below an earlier acknowledged raise
    writes = defaultdict(list)
    for op in by_inv:
        if (op['op'] == 'write' and op['result'] == 'ok' and wrote(op)
                and op['args'].get('token') is not None and not is_row(op)):
            writes[op['args']['scope']].append((op, op['args']['token']))
    for scope, qs in writes.items():
        for q, (val, it) in sweep(raises.get(scope, []), qs, resets.of(scope)):
            v.append(('I3', 'scope %s: write with token %d committed after the mark was raised to %d'
                      % (scope, q['args']['token'], val), [it, q]))

    # I3 for tables fenced per row only: a write of a row acknowledged with a
    # token below that of a write of the same row acknowledged before it was
    # invoked (no DELETE on these tables: they keep no mark of deleted rows);
    # an asynchronous promotion between the two excuses it (rows fall back)
    per_row = defaultdict(list)
    for op in hist:
        if op['op'] == 'write' and op['result'] == 'ok' and is_row(op) and op['args'].get('token') is not None:
            for st in wrote(op):
                per_row[(op['args']['table'], st['k'])].append(op)
    for (tbl, k), ops in per_row.items():
        for q, (val, it) in sweep([(o['args']['token'], o) for o in ops],
                                  [(o, o['args']['token']) for o in ops], resets.async_promotions):
            v.append(('I3', 'table %s row k=%s: write with token %d committed after the row was written with %d'
                      % (tbl, k, q['args']['token'], val), [it, q]))

    # I4: acknowledged tokenless writes that changed rows
    for op in by_inv:
        if op['op'] == 'write' and op['result'] == 'ok' and op['args'].get('token') is None and wrote(op):
            v.append(('I4', 'table %s: a write with no token committed' % op['args']['table'], [op]))

    # I5 and LOST: the audit table and final tables against the statements
    changes = defaultdict(list)
    for row in final.get('audit', []):
        if row.get('stmt'):
            changes[row['stmt']].append(row)
    payloads = set()
    for t, rows in final.get('tables', {}).items():
        for r in rows:
            payloads.add(r[1])
    for op in by_inv:
        if op['op'] != 'write':
            continue
        for s in op['args'].get('stmts', []):
            bad = None
            if op['result'] == 'fail':
                bad = 'its transaction failed (%s)' % op.get('sqlstate')
            elif op['result'] == 'ok' and s.get('result') == 'fail':
                bad = 'the statement was rejected (%s)' % s.get('sqlstate')
            elif op['result'] != 'unknown' and s.get('result') == 'rolledback':
                bad = 'it was rolled back to a savepoint'
            if bad and (s['id'] in changes or s['id'] in payloads):
                where = changes.get(s['id']) or [{'payload': s['id'], 'in': 'final table'}]
                v.append(('I5', 'statement %s left a change although %s: %s'
                          % (s['id'], bad, json.dumps(where[:3])), [op]))
            if (op['result'] == 'ok' and s.get('result') == 'ok' and (s.get('rows') or 0) > 0
                    and not op['args'].get('sync_off') and 'audit' in final and s['id'] not in changes
                    and not any(op['inv'] < p['cmp'] for p in resets.async_promotions)):
                v.append(('LOST', 'statement %s was acknowledged as committed (%d rows) but is not in the audit table'
                          % (s['id'], s['rows']), [op]))

    # I2 for rows: a row's token never goes down.  Changes of one row are in
    # the audit table in commit order (a later writer of the row waited for
    # the earlier one's commit before its AFTER trigger ran); only for scopes
    # no reset_mark touched (a reset lowers what rows may carry).
    scope_of = {}
    for op in hist:
        if op['op'] == 'write':
            scope_of[op['args']['table']] = op['args']['scope']
    last = {}
    for row in final.get('audit', []):
        sc = scope_of.get(row['tbl'])
        if sc is None or row['tok'] is None or (not row['tbl'].startswith('r_') and resets.of(sc)):
            continue
        key = (row['tbl'], row['k'])
        prev = last.get(key)
        if row['kind'] != 'D' and prev is not None and row['tok'] < prev['tok']:
            ops = [o for o in hist if o['op'] == 'write' and any(
                s['id'] in (row['stmt'], prev['stmt']) for s in o['args'].get('stmts', []))]
            v.append(('I2', 'table %s row k=%s: token went down from %s (statement %s) to %s (statement %s)'
                      % (row['tbl'], row['k'], prev['tok'], prev['stmt'], row['tok'], row['stmt']), ops))
        last[key] = row

    return v


def summary(hist):
    c = defaultdict(int)
    for op in hist:
        if op['op'] == 'fault':
            k = op['args'].get('kind', '?')
            if k == 'dump_restore' and op['args'].get('form', 'whole') != 'whole':
                k += '-' + op['args']['form']
            if k == 'promote':
                k += '-' + op['args'].get('mode', '?') + ('-lagging' if op['args'].get('lagging') else '')
                if op['args'].get('after_move'):
                    k += '-right-after-a-move' + ('-stopped' if op['args'].get('standby_was') == 'stopped' else '')
                    if op['args'].get('clock_state') == 'moves':
                        c['move:promoted standby had missed the claim of the clock'] += 1
            c['fault:' + k + ('' if op['result'] == 'ok' else '(' + op['result'] + ')')] += 1
            # how the moves were made (hist.py dump_restore, upgrade, moved)
            a = op['args']
            if a.get('fenced_older_converged') is False:
                c['finding:fence_older_timelines() still lifting after 4 calls (' + k + ')'] += 1
            if k in ('dump_restore', 'dump_restore-schema', 'dump_restore-rows', 'upgrade',
                     'upgrade_major') and op['result'] == 'ok':
                if a.get('source') == 'standby':
                    c['move:dump of the standby' + (' (replay paused: lossy)' if a.get('lossy') else '')] += 1
                if a.get('mode'):
                    c['move:pg_upgrade ' + a['mode']] += 1
                if a.get('standby_made'):
                    c['move:new standby made ' + a['standby_made']
                      + ('' if a.get('standby_ok') else ' (failed)')] += 1
                if 'fenced_older' in a:
                    c['move:fence_older_timelines() after it'] += 1
        elif op['op'] == 'reset_mark':
            c['fault:reset_mark' + ('' if op['result'] == 'ok' else '(' + op['result'] + ')')] += 1
        else:
            c[op['op'] + ':' + op['result']] += 1
    return dict(sorted(c.items()))


def report(v, out=sys.stdout, limit=20):
    by = defaultdict(int)
    for inv, _, _ in v:
        by[inv] += 1
    for i, (inv, text, ops) in enumerate(v):
        if i >= limit:
            print('... and %d more' % (len(v) - limit), file=out)
            break
        print('VIOLATION %s: %s' % (inv, text), file=out)
        for op in ops:
            print('    ' + short(op), file=out)
    return dict(by)


# ------------------------------------------------------------------ self-test
def _op(proc, op, args, inv, cmp, result='ok', **kw):
    d = {'proc': proc, 'op': op, 'args': args, 'inv': inv, 'cmp': cmp, 'result': result}
    d.update(kw)
    return d


def _w(proc, scope, tok, inv, cmp, result='ok', sid=None, sres='ok', rows=1, sync_off=False):
    sid = sid or '%s-%s' % (proc, inv)
    return _op(proc, 'write', {'scope': scope, 'table': 'w_' + scope, 'token': tok, 'sync_off': sync_off,
                               'stmts': [{'id': sid, 'kind': 'insert', 'k': 1, 'result': sres, 'rows': rows}]},
               inv, cmp, result)


def _audit(*sids):
    return {'audit': [{'n': i, 'tbl': 'w_s', 'kind': 'I', 'k': 1, 'payload': s, 'tok': 1, 'stmt': s}
                      for i, s in enumerate(sids)], 'tables': {}}


def self_test():
    cases = []
    # a clean history: terms rising, writes at the mark, a stale write
    # rejected, a read after the raise, a reset then a lower write
    clean = [
        _op('c0', 'next_epoch', {'scope': 's'}, 1, 2, value=1),
        _w('c0', 's', 1, 3, 4, sid='a'),
        _op('c1', 'next_epoch', {'scope': 's'}, 5, 6, value=2),
        _w('c0', 's', 1, 7, 8, result='fail', sid='b', sres='fail'),
        _op('m', 'read_mark', {'scope': 's'}, 9, 10, value=2),
        _op('n', 'reset_mark', {'scope': 's', 'mark': 1}, 11, 12, value=2),
        _op('m', 'read_mark', {'scope': 's'}, 13, 14, value=1),
        _w('c0', 's', 1, 15, 16, sid='c'),
        # concurrent terms may complete in either order
        _op('c0', 'next_epoch', {'scope': 's'}, 17, 20, value=4),
        _op('c1', 'next_epoch', {'scope': 's'}, 18, 19, value=3),
        # an unknown write is neither: its stale token is no violation
        _w('c1', 's', 1, 21, 22, result='unknown', sid='d'),
        _w('c1', 's', None, 23, 24, result='fail', sid='e', sres='fail'),
    ]
    cases.append(('clean history', clean, _audit('a', 'c', 'd'), set()))
    cases.append(('I1: a term returned twice', clean + [
        _op('c2', 'next_epoch', {'scope': 's'}, 30, 31, value=4)], _audit('a', 'c'), {'I1'}))
    cases.append(('I1: a term below one returned before', [
        _op('c0', 'next_epoch', {'scope': 's'}, 1, 2, value=5),
        _op('c1', 'acquire_lease', {'scope': 's', 'holder': 'h'}, 3, 4, value=[True, 3])],
        _audit(), {'I1'}))
    cases.append(('I2: a mark went down with no reset', [
        _op('m', 'read_mark', {'scope': 's'}, 1, 2, value=7),
        _op('m', 'read_mark', {'scope': 's'}, 3, 4, value=6)], _audit(), {'I2'}))
    cases.append(('I2: a read raise lost in a promotion (no violation)', [
        _op('m', 'read_mark', {'scope': 'x'}, 1, 2, value=9),
        _op('n', 'fault', {'kind': 'promote', 'mode': 'sync'}, 3, 4),
        _op('m', 'read_mark', {'scope': 'x'}, 5, 6, value=8)], _audit(), set()))
    cases.append(('I2: an acknowledged raise lost in a synchronous promotion', [
        _op('c0', 'takeover', {'scope': 'x', 'token': 9}, 1, 2, value=3),
        _op('n', 'fault', {'kind': 'promote', 'mode': 'sync'}, 3, 4),
        _op('m', 'read_mark', {'scope': 'x'}, 5, 6, value=3)], _audit(), {'I2'}))
    cases.append(('I2: an acknowledged raise lost', [
        _op('c0', 'takeover', {'scope': 'x', 'token': 9}, 1, 2, value=3),
        _op('m', 'read_mark', {'scope': 'x'}, 3, 4, value=3)], _audit(), {'I2'}))
    cases.append(('I2: a reset may lie between (no violation)', [
        _op('m', 'read_mark', {'scope': 's'}, 1, 2, value=7),
        _op('n', 'reset_mark', {'scope': 's', 'mark': 3}, 2.5, 5, result='unknown'),
        _op('m', 'read_mark', {'scope': 's'}, 3, 4, value=3)], _audit(), set()))
    cases.append(('I2: a scope unknown after its raise (no promotion)', [
        _op('m', 'next_epoch', {'scope': 'f'}, 1, 2, value=5),
        _op('final', 'read_mark', {'scope': 'f'}, 3, 4)], _audit(), {'I2'}))
    cases.append(('I2: a scope lost by an asynchronous promotion (no violation)', [
        _op('m', 'next_epoch', {'scope': 'f'}, 1, 2, value=5),
        _op('n', 'fault', {'kind': 'promote', 'mode': 'async', 'external': []}, 3, 4),
        _op('final', 'read_mark', {'scope': 'f'}, 5, 6)], _audit(), set()))
    cases.append(('I2: a lower mark of a scope kept by an asynchronous promotion', [
        _op('m', 'next_epoch', {'scope': 'f'}, 1, 2, value=5),
        _op('n', 'fault', {'kind': 'promote', 'mode': 'async', 'external': []}, 3, 4),
        _op('final', 'read_mark', {'scope': 'f'}, 5, 6, value=4)], _audit(), {'I2'}))
    cases.append(('I2: a scope lost by a move from a paused standby (no violation)', [
        _op('m', 'next_epoch', {'scope': 'f'}, 1, 2, value=5),
        _op('n', 'fault', {'kind': 'dump_restore', 'source': 'standby', 'lossy': True, 'external': []}, 3, 4),
        _op('final', 'read_mark', {'scope': 'f'}, 5, 6)], _audit(), set()))
    cases.append(('I2: a scope lost by a move from the primary', [
        _op('m', 'next_epoch', {'scope': 'f'}, 1, 2, value=5),
        _op('n', 'fault', {'kind': 'dump_restore', 'source': 'primary'}, 3, 4),
        _op('final', 'read_mark', {'scope': 'f'}, 5, 6)], _audit(), {'I2'}))
    cases.append(('I2: an external raise lost by a lossy move (no violation)', [
        _op('c0', 'takeover', {'scope': 'x', 'token': 9}, 1, 2, value=3),
        _op('n', 'fault', {'kind': 'dump_restore', 'source': 'standby', 'lossy': True, 'external': ['x']}, 3, 4),
        _op('m', 'read_mark', {'scope': 'x'}, 5, 6, value=3)], _audit(), set()))
    cases.append(('I2: an external raise lost by a move from a standby that caught up', [
        _op('c0', 'takeover', {'scope': 'x', 'token': 9}, 1, 2, value=3),
        _op('n', 'fault', {'kind': 'dump_restore', 'source': 'standby', 'external': ['x']}, 3, 4),
        _op('m', 'read_mark', {'scope': 'x'}, 5, 6, value=3)], _audit(), {'I2'}))
    cases.append(('I2: a mark lost by a move of the application\'s data alone (no violation)', [
        _op('m', 'next_epoch', {'scope': 'f'}, 1, 2, value=5),
        _op('n', 'fault', {'kind': 'dump_restore', 'source': 'primary', 'form': 'rows'}, 3, 4),
        _op('final', 'read_mark', {'scope': 'f'}, 5, 6, value=0)], _audit(), set()))
    cases.append(('I3: a write below a mark the move of the application\'s data lost (no violation)', [
        _op('c0', 'next_epoch', {'scope': 's'}, 1, 2, value=5),
        _w('c0', 's', 5, 3, 4, sid='a'),
        _op('n', 'fault', {'kind': 'dump_restore', 'source': 'primary', 'form': 'schema'}, 5, 6),
        _w('c1', 's', 2, 7, 8, sid='b')], _audit('a', 'b'), set()))
    cases.append(('I1: a term after a move of the application\'s data not above one before it', [
        _op('c0', 'next_epoch', {'scope': 's'}, 1, 2, value=7),
        _op('n', 'fault', {'kind': 'dump_restore', 'source': 'primary', 'form': 'schema'}, 3, 4),
        _op('c1', 'next_epoch', {'scope': 's'}, 5, 6, value=7)], _audit(), {'I1'}))
    cases.append(('I1: a term after a lossy move not above one before it', [
        _op('c0', 'next_epoch', {'scope': 's'}, 1, 2, value=7),
        _op('n', 'fault', {'kind': 'dump_restore', 'source': 'standby', 'lossy': True, 'external': []}, 3, 4),
        _op('c1', 'next_epoch', {'scope': 's'}, 5, 6, value=7)], _audit(), {'I1'}))
    cases.append(('I3: a stale write committed', [
        _op('c0', 'next_epoch', {'scope': 's'}, 1, 2, value=1),
        _op('c1', 'next_epoch', {'scope': 's'}, 3, 4, value=2),
        _w('c0', 's', 1, 5, 6, sid='z')], _audit('z'), {'I3'}))
    cases.append(('I3: below a mark raised by a write', [
        _w('c1', 's', 8, 1, 2, sid='y'),
        _w('c0', 's', 5, 3, 4, sid='z')], _audit('y', 'z'), {'I3'}))
    cases.append(('I3: a reset invoked during the write may lie between (no violation)', [
        _op('c1', 'takeover', {'scope': 'x', 'token': 9}, 1, 2, value=8),
        _w('c0', 'x', 8, 3, 6, sid='z'),
        _op('n', 'reset_mark', {'scope': 'x', 'mark': 7}, 4, 5, value=9)], _audit('z'), set()))
    cases.append(('I3: a reset invoked after the write completed excuses nothing', [
        _op('c1', 'takeover', {'scope': 'x', 'token': 9}, 1, 2, value=8),
        _w('c0', 'x', 8, 3, 4, sid='z'),
        _op('n', 'reset_mark', {'scope': 'x', 'mark': 7}, 5, 6, value=9),
        _w('c2', 'x', 8, 3.5, 7, sid='y')], _audit('z', 'y'), {'I3'}))
    cases.append(('I3: concurrent raise (no violation)', [
        _op('c1', 'next_epoch', {'scope': 's'}, 1, 4, value=2),
        _w('c0', 's', 1, 3, 5, sid='z')], _audit('z'), set()))
    cases.append(('I4: a tokenless write committed', [
        _w('c0', 's', None, 1, 2, sid='t')], _audit('t'), {'I4'}))
    cases.append(('I5: a rejected statement left a change', [
        _w('c0', 's', 1, 1, 2, result='fail', sid='r', sres='fail')], _audit('r'), {'I5'}))
    cases.append(('I5: a statement rolled back to a savepoint left a change', [
        _w('c0', 's', 1, 1, 2, sid='r', sres='rolledback')], _audit('r'), {'I5'}))
    cases.append(('I5: a rejected payload in the final table', [
        _w('c0', 's', 1, 1, 2, result='fail', sid='r', sres='fail')],
        {'audit': [], 'tables': {'w_s': [[1, 'r', 1]]}}, {'I5'}))
    cases.append(('LOST: an acknowledged write missing', [
        _w('c0', 's', 1, 1, 2, sid='l')], _audit(), {'LOST'}))
    cases.append(('LOST: an acknowledged write lost by a lossy move (no violation)', [
        _w('c0', 's', 1, 1, 2, sid='l'),
        _op('n', 'fault', {'kind': 'dump_restore', 'source': 'standby', 'lossy': True}, 3, 4)], _audit(), set()))
    cases.append(('LOST: an acknowledged write lost by a move from the primary', [
        _w('c0', 's', 1, 1, 2, sid='l'),
        _op('n', 'fault', {'kind': 'upgrade', 'mode': '--copy'}, 3, 4)], _audit(), {'LOST'}))
    cases.append(('LOST: not with synchronous_commit off', [
        _w('c0', 's', 1, 1, 2, sid='l', sync_off=True)], _audit(), set()))
    cases.append(("I2: a row's token went down", [
        _w('c0', 's', 5, 1, 2, sid='r1'), _w('c1', 's', 5, 3, 4, sid='r2')],
        {'audit': [{'n': 1, 'tbl': 'w_s', 'kind': 'I', 'k': 1, 'payload': 'r1', 'tok': 5, 'stmt': 'r1'},
                   {'n': 2, 'tbl': 'w_s', 'kind': 'U', 'k': 1, 'payload': 'r2', 'tok': 4, 'stmt': 'r2'}],
         'tables': {}}, {'I2'}))
    r1 = _w('c0', 's', 5, 1, 2, sid='p1')
    r2 = _w('c1', 's', 4, 3, 4, sid='p2')
    for r in (r1, r2):
        r['args'].update(table='r_s', rowmode=True)
    cases.append(('I3: a row written with a lower token (per-row table)', [r1, r2], _audit('p1', 'p2'), {'I3'}))
    r3 = _w('c0', 's', 9, 1, 2, sid='p3')
    r3['args'].update(table='r_s', rowmode=True)
    cases.append(('per-row writes raise no scope mark (no violation)', [
        r3, _w('c1', 's', 4, 3, 4, sid='p4')], _audit('p3', 'p4'), set()))
    bad = 0
    for name, hist, final, want in cases:
        got = {x[0] for x in check(hist, final)}
        if got == want:
            print('ok - checker self-test: %s (reports %s)' % (name, ', '.join(sorted(got)) or 'nothing'))
        else:
            bad += 1
            print('not ok - checker self-test: %s: wanted %s, got %s' % (name, sorted(want), sorted(got)))
            report(check(hist, final))
    return 1 if bad else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == '--self-test':
        return self_test()
    if len(sys.argv) != 2:
        print('usage: checker.py DIR | --self-test', file=sys.stderr)
        return 2
    hist, final = load(sys.argv[1])
    v = check(hist, final)
    s = summary(hist)
    print('operations: %d; %s' % (sum(1 for o in hist if o['proc'] != 'final'),
                                  ', '.join('%s %d' % kv for kv in s.items())))
    by = report(v)
    print('violations: %d %s' % (len(v), json.dumps(by, sort_keys=True)))
    return 1 if v else 0


if __name__ == '__main__':
    sys.exit(main())
