#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make hitprofile: where the instructions of one hit go, per function.

perf does not exist under TCG.  Instead, for each bench case asked for
(guest/bench.sh, PROFILE=1), boot the normal kernel with QEMU's gdbstub,
let the guest set the case up, break on fevent_sample_bench() and
single-step whole calls, from the first instruction to the return, three
of them, keeping the shortest (one no interrupt ran in); the scheduler,
where a call enables preemption with a reschedule pending, is run
through, not stepped.
Every instruction executed on the way is one step (QEMU steps with
interrupts and timers off), so the trace is exact and repeatable: the
same count the icount benchmark measures for the case, broken down.

Prints, per case, the instructions per function in order of first entry
and the total; writes the full trace (address, symbol+offset) to
build/bench/hit-<case>.txt (build/bench-arm64/ for ARCH=arm64).
--diff A,B prints the per-function difference between two cases.

The architecture's gdb, its name there and where a function's return
address is at its first instruction come from harness/arch.py: the call
ends when the pc reaches that address with the stack pointer back at or
above where it was (x86_64 pops the address, arm64 has it in x30).
"""

import argparse
import bisect
import collections
import os
import socket
import subprocess
import sys
import tempfile
import threading

from harness import arch as arches
from harness.boot import boot
from harness.initramfs import make_initramfs
from harness.paths import BUILD, LOGS
from bench import guest_files, suffix

# Steps %(calls)d calls and keeps the shortest: a call a softirq or an
# interrupt ran in is longer, and not what the benchmark measures.  The
# scheduler, where the call enables preemption with a reschedule pending
# (on arm64 under the gdbstub, every call), is run through, not stepped:
# a breakpoint at its return, and the instructions of the call go on.
GDB_SCRIPT = r'''
import gdb
gdb.execute('set pagination off')
gdb.execute('set confirm off')
gdb.execute('target remote :%(port)d')
gdb.execute('hbreak *%(addr)s')
skip = set(%(skip)r)
best = None
for call in range(%(calls)d):
    gdb.execute('continue')
    sp0 = int(gdb.parse_and_eval('$sp')) & 0xffffffffffffffff
    ret = int(gdb.parse_and_eval(%(ret)r)) & 0xffffffffffffffff
    pcs, skipped = [], 0
    while len(pcs) < %(limit)d:
        pc = int(gdb.parse_and_eval('$pc')) & 0xffffffffffffffff
        sp = int(gdb.parse_and_eval('$sp')) & 0xffffffffffffffff
        if pc == ret and sp >= sp0:
            break
        if pc in skip:
            back = int(gdb.parse_and_eval(%(ret)r)) & 0xffffffffffffffff
            gdb.execute('thbreak *%%d' %% back, to_string=True)
            gdb.execute('continue', to_string=True)
            skipped += 1
            continue
        pcs.append(pc)
        gdb.execute('stepi', to_string=True)
    # a stop elsewhere (another CPU, a limit) is not a call
    ok = pcs and pcs[0] == %(addr)s and len(pcs) < %(limit)d
    print('call %%d: %%d instructions from %%x%%s%%s' %% (
        call, len(pcs), pcs[0] if pcs else 0,
        ', the scheduler run through %%d times' %% skipped if skipped else '',
        '' if ok else ', not a whole call'))
    if ok and (best is None or len(pcs) < len(best)):
        best = pcs
with open(%(out)r, 'w') as f:
    f.write(''.join('%%x\n' %% pc for pc in best or []))
gdb.execute('kill')
'''


# Where a call enables preemption and may schedule (x86_64 through thunks)
SCHEDULE = ('preempt_schedule', 'preempt_schedule_notrace',
            'preempt_schedule_thunk', 'preempt_schedule_notrace_thunk')


def gdb_cmd(arch, port, addr, out, limit, script, calls=3, skip=()):
    """Write the gdb script that steps calls calls from addr, running
    through the functions at the addresses skip, into script, and return
    the command that runs it."""
    with open(script, 'w') as f:
        f.write(GDB_SCRIPT % {'port': port, 'addr': addr, 'ret': arch.gdb_ret,
                              'out': out, 'limit': limit, 'calls': calls,
                              'skip': sorted(skip)})
    return [arch.gdb, '-nx', '-batch', '-ex',
            f'set architecture {arch.gdb_arch}', '-x', script]


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Symbols:
    """The text symbols of syms, (address, name) pairs, by address"""

    def __init__(self, syms):
        syms = sorted(syms)
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    @classmethod
    def vmlinux(cls, arch, obj):
        out = subprocess.run([arch.cross + 'nm', '-n', os.path.join(obj, 'vmlinux')],
                             capture_output=True, text=True, check=True).stdout
        return cls((int(f[0], 16), f[2]) for f in map(str.split, out.splitlines())
                   if len(f) == 3 and f[1] in 'tTwW')

    def with_extra(self, extra):
        """These and extra (a module's, from the guest)"""
        return Symbols(list(zip(self.addrs, self.names)) + list(extra))

    def address(self, name):
        """The address of name, or None"""
        for a, n in zip(self.addrs, self.names):
            if n == name:
                return a
        return None

    def lookup(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return '?', addr
        return self.names[i], addr - self.addrs[i]


def profile_case(arch, obj, syms, case, timeout, limit):
    initrd = os.path.join(BUILD, f'initramfs-hitprofile{suffix(arch)}.cpio.gz')
    make_initramfs(arch, obj, 'run', [], initrd,
                   extra_files=guest_files(arch, obj))
    port = free_port()
    cmdline = (f'console={arch.console} panic=-1 loglevel=4 nokaslr PROFILE=1 '
               f'BENCH_CASES={case}')
    logpath = os.path.join(LOGS, f'console-hitprofile-{case}.log')
    extra, ready = [], []
    got_ready, stop = threading.Event(), threading.Event()

    def on_line(s):
        f = s.split()
        if s.startswith('PROFILE-SYM') and len(f) >= 4:
            extra.append((int(f[1], 16), f[3]))
        elif s.startswith('PROFILE-READY') and len(f) == 3:
            ready.append((f[1], f[2]))
            got_ready.set()
        elif s.startswith('BENCH-ERROR'):
            print(s)

    # The guest runs under boot(), the one reader of consoles, in a
    # thread of its own; gdb steps it from this one, then stops it.
    guest = threading.Thread(target=boot, kwargs=dict(
        arch=arch, obj=obj, initrd=initrd, cmdline=cmdline, logpath=logpath,
        # one CPU: gdb's stops and steps are all of the CPU in the call
        timeout=timeout, smp=1,
        extra_qemu=['-gdb', f'tcp:127.0.0.1:{port}'],
        on_line=on_line, stall=timeout, stop=stop))
    guest.start()
    try:
        while not got_ready.wait(1.0):
            if not guest.is_alive():
                break
        if not ready:
            print(f'error: case {case} did not get ready; log: {logpath}')
            return None
        fd, tracefile = tempfile.mkstemp(prefix='hit-', suffix='.pcs')
        os.close(fd)
        fd, script = tempfile.mkstemp(prefix='hit-', suffix='.py')
        os.close(fd)
        skip = [a for a in map(syms.address, SCHEDULE) if a is not None]
        cmd = gdb_cmd(arch, port, '0x' + ready[0][1], tracefile, limit, script,
                      skip=skip)
        print('$ ' + ' '.join(cmd))
        gdb = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=timeout)
        os.unlink(script)
        with open(tracefile) as f:
            pcs = [int(x, 16) for x in f.read().split()]
        os.unlink(tracefile)
        print(''.join(x + '\n' for x in gdb.stdout.splitlines()
                      if x.startswith('call ')), end='')
        if not pcs:
            tail = (gdb.stdout + gdb.stderr).splitlines()[-20:]
            print('error: gdb traced no whole call; its last lines:\n' +
                  '\n'.join(tail))
            return None
    finally:
        stop.set()
        guest.join()
    return ready[0][0], pcs, extra


def summarize(out, name, pcs, syms):
    per = collections.OrderedDict()
    lines = []
    for pc in pcs:
        fn, off = syms.lookup(pc)
        per[fn] = per.get(fn, 0) + 1
        lines.append(f'{pc:x} {fn}+0x{off:x}')
    with open(os.path.join(out, f'hit-{name}.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return per


def show(name, per):
    print(f'=== {name}: {sum(per.values())} instructions in one call')
    for fn, n in per.items():
        print(f'  {n:6d}  {fn}')


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--obj', default=os.path.join(BUILD, 'obj-bench'),
                    help='the -O2 kernel of the architecture ARCH= names')
    ap.add_argument('--cases', default='2,3,6',
                    help='comma-separated bench case numbers')
    ap.add_argument('--diff', help='A,B: per function, case B minus case A')
    ap.add_argument('--timeout', type=int, default=600)
    ap.add_argument('--limit', type=int, default=20000,
                    help='most instructions to step in one call')
    args = ap.parse_args()
    arch = arches.get()
    out = os.path.join(BUILD, 'bench' + suffix(arch))
    os.makedirs(out, exist_ok=True)
    os.makedirs(LOGS, exist_ok=True)
    # gdb steps the guest: TCG, whose gdbstub steps one instruction
    os.environ['FBE_ACCEL'] = 'tcg'
    results, rc = {}, 0
    syms = Symbols.vmlinux(arch, args.obj)
    for case in args.cases.split(','):
        r = profile_case(arch, args.obj, syms, case, args.timeout, args.limit)
        if r is None:
            rc = 1
            continue
        name, pcs, extra = r
        per = summarize(out, name, pcs, syms.with_extra(extra))
        results[case] = (name, per)
        show(name, per)
    if args.diff:
        a, b = args.diff.split(',')
        if a in results and b in results:
            pa, pb = results[a][1], results[b][1]
            print(f'=== {results[b][0]} minus {results[a][0]}: '
                  f'{sum(pb.values()) - sum(pa.values()):+d}')
            for fn in list(pa) + [f for f in pb if f not in pa]:
                d = pb.get(fn, 0) - pa.get(fn, 0)
                if d:
                    print(f'  {d:+6d}  {fn}')
    return rc


if __name__ == '__main__':
    sys.exit(main())
