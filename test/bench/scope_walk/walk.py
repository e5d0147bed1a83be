# walk.py TRACE: from trace_gdb.py's trace, per check of a write, two
# measures of how far the code makes a reader go:
#   - following the scope (the measure): only the calls that receive
#     the scope in one of its forms (name, hash, pseudo-OID, id, hold, key,
#     fill, info); the scope enters a file when such a call is in it, and
#     comes back to a file when it returns to one it had left;
#   - every call: also the helpers that do not carry the scope (a call into
#     another file and its return are two moves).
import sys

lines = [l.split() for l in open(sys.argv[1])]
checks = []
cur = None
for parts in lines:
    d, fn, fl = int(parts[0]), parts[1], parts[2]
    carried = len(parts) > 3 and parts[3] == '1'
    if fn in ('check_scope', 'scope_mark_admit', 'fencing_takeover') and \
            (cur is None or d <= cur[0][0]):
        cur = []
        checks.append(cur)
        carried = True          # the check's entry receives the scope
    cur.append((d, fn, fl, carried))


def walk(calls):
    base = calls[0][0]
    stack = []
    seq = []
    for d, fn, fl, _ in calls:
        rel = d - base
        while len(stack) > rel:
            stack.pop()
            if stack:
                seq.append(stack[-1][1])
        while len(stack) < rel:
            stack.append(stack[-1] if stack else (fn, fl))
        stack.append((fn, fl))
        seq.append(fl)
    moves = [f for i, f in enumerate(seq) if i == 0 or seq[i - 1] != f]
    seen = set()
    returns = 0
    for f in moves:
        if f in seen:
            returns += 1
        seen.add(f)
    return seen, moves, returns


for c in checks:
    # following the scope: a call that does not receive it is left out, and
    # so is everything it calls
    followed = []
    skip_below = None
    for d, fn, fl, carried in c:
        if skip_below is not None and d > skip_below:
            continue
        skip_below = None
        if not carried:
            skip_below = d
            continue
        followed.append((d, fn, fl, carried))
    files, moves, returns = walk(followed)
    print("check starting %s, following the scope: %d stops, %d files, %d returns to a file left"
          % (c[0][1], len(followed), len(files), returns))
    print("  files:", sorted(files))
    print("  path:", ' > '.join(m.split('/')[-1] for m in moves))
    files, moves, returns = walk(c)
    print("  every call: %d calls, %d files, %d moves, %d returns to a file left"
          % (len(c), len(files), len(moves), returns))
