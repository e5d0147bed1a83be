#!/usr/bin/python3
# test/histories/totals.py SCRATCH: the figures of several histories (the
# soak's): histories, operations by kind and outcome, faults by kind,
# violations by invariant; judged again by checker.py.
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402


def main(scratch):
    tot = defaultdict(int)
    viol = defaultdict(int)
    n = ops = 0
    for d in sorted(os.listdir(scratch)):
        p = os.path.join(scratch, d)
        if not d.startswith('seed-') or not os.path.isdir(os.path.join(p, 'history')):
            continue
        hist, final = checker.load(p)
        n += 1
        ops += sum(1 for o in hist if o['proc'] != 'final')
        for k, c in checker.summary(hist).items():
            tot[k] += c
        for inv, _, _ in checker.check(hist, final):
            viol[inv + (' (sabotaged)' if d.endswith('-sabotage') else '')] += 1
    print('totals: %d histories, %d operations' % (n, ops))
    for k, c in sorted(tot.items()):
        print('    %-40s %d' % (k, c))
    print('    violations: %s' % (dict(viol) if viol else 0))


if __name__ == '__main__':
    main(sys.argv[1])
