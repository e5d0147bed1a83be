# trace_gdb.py: sourced by gdb attached to a backend.  A breakpoint on every
# function of fencing.so (FENCING_SO); each hit inside one check of a write
# (check_scope, scope_mark_admit) or a takeover() writes
# "<depth of our frames> <function> <file under src/>" to WALK_OUT.
import gdb
import os
import subprocess

out = open(os.environ['WALK_OUT'], 'w')
ROOTS = ('scope_mark_admit', 'check_scope', 'fencing_takeover')


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
            out.write('%d %s %s\n' % (len(ours), ours[0][0], ours[0][1]))
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
