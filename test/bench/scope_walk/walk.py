# walk.py TRACE: from trace_gdb.py's trace, per check of a write: the calls of
# our functions, the files entered, and how often control came back to a
# file it had left (a call into another file and its return are two moves;
# every call counts, also of helpers that do not carry the scope).
import sys
lines=[l.split() for l in open(sys.argv[1])]
# split into checks: each starts at depth-5 check_scope
checks=[]; cur=None
for d,fn,fl in lines:
    d=int(d)
    if fn in ('check_scope','scope_mark_admit','fencing_takeover') and (cur is None or d<=cur[0][0]):
        cur=[]; checks.append(cur)
    cur.append((d,fn,fl))
for c in checks:
    base=c[0][0]
    stack=[]  # files by depth
    seq=[]
    for d,fn,fl in c:
        rel=d-base
        while len(stack)>rel:
            stack.pop()
            if stack: seq.append(stack[-1])
        stack.append(fl); seq.append(fl)
    # compress consecutive duplicates
    walk=[f for i,f in enumerate(seq) if i==0 or seq[i-1]!=f]
    seen=set(); returns=0
    for f in walk:
        if f in seen: returns+=1
        seen.add(f)
    print("check starting %s: %d calls, %d files, %d moves, %d returns to a file left" % (c[0][1], len(c), len(seen), len(walk), returns))
    print("  files:", sorted(seen))
