# trace_gdb.py: sourced by gdb attached to a backend.  A breakpoint on every
# function of fencing.so (FENCING_SO); each hit inside one check of a write
# (check_scope, scope_mark_admit) or a takeover() writes
#   "<depth of our frames> <function> <file under src/> <carries>"
# to WALK_OUT, where <carries> is 1 when the call receives the scope being
# checked in one of its forms: its name (WALK_SCOPES, comma-separated), its
# id in fencing.scopes, its name's hash or pseudo-OID (WALK_IDS: the run
# script reads them with SQL), or a structure that stands for it (a hold, a
# key, a cache fill, a row's info, a write being judged).
import gdb
import os
import subprocess

out = open(os.environ['WALK_OUT'], 'w')
ROOTS = ('scope_mark_admit', 'check_scope', 'fencing_takeover')
SCOPES = set(s for s in os.environ.get('WALK_SCOPES', '').split(',') if s)
IDS = set(int(i) for i in os.environ.get('WALK_IDS', '').split(',') if i)
SCOPE_TYPES = ('ScopeHold', 'MarkFill', 'ScopeKey', 'ScopeInfo', 'FenceWrite',
               'CachedMark', 'SharedMark', 'Binding')


def our_file(frame):
    try:
        sal = frame.find_sal()
    except Exception:
        return None
    if sal.symtab is None:
        return None
    name = sal.symtab.filename
    if '/src/' in name or name.startswith('src/'):
        return name.split('src/')[-1]
    return None


def carries(frame):
    try:
        block = frame.block()
    except Exception:
        return False
    while block is not None and block.function is None:
        block = block.superblock
    if block is None:
        return False
    for sym in block:
        if not sym.is_argument:
            continue
        try:
            val = sym.value(frame)
            t = val.type.strip_typedefs()
            if t.code == gdb.TYPE_CODE_PTR:
                target = val.type.target()
                tname = str(target.unqualified())
                if any(n in tname for n in SCOPE_TYPES):
                    return True
                if target.strip_typedefs().code == gdb.TYPE_CODE_INT and \
                        target.strip_typedefs().sizeof == 1 and int(val) != 0:
                    if val.string() in SCOPES:
                        return True
            elif t.code in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_ENUM) and t.sizeof >= 4:
                if int(val) in IDS:
                    return True
        except Exception:
            continue
    return False


class Hook(gdb.Breakpoint):
    def stop(self):
        frame = gdb.newest_frame()
        ours = []
        inside = False
        while frame is not None:
            if frame.name() in ROOTS:
                inside = True
            f = our_file(frame)
            if f is not None:
                ours.append((frame.name(), f))
            frame = frame.older()
        if inside:
            out.write('%d %s %s %d\n' % (len(ours), ours[0][0], ours[0][1],
                                        1 if carries(gdb.newest_frame()) else 0))
            out.flush()
        return False


names = subprocess.run(['nm', '--defined-only', os.environ['FENCING_SO']],
                       capture_output=True, text=True).stdout.splitlines()
for line in names:
    parts = line.split()
    if len(parts) == 3 and parts[1] in 'tT' and not parts[2].startswith('_') \
            and parts[2] not in ('frame_dummy', 'register_tm_clones', 'deregister_tm_clones'):
        try:
            Hook(parts[2], internal=True)
        except Exception:
            pass
