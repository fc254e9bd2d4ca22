#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make hitprofile: where the instructions of one hit go, per function.

perf does not exist under TCG.  Instead, for each bench case asked for
(guest/bench.sh, PROFILE=1), boot the normal kernel with QEMU's gdbstub,
let the guest set the case up, break on fevent_sample_bench() and
single-step one whole call, from its first instruction to its return.
Every instruction executed on the way is one step (QEMU steps with
interrupts and timers off), so the trace is exact and repeatable: the
same count the icount benchmark measures for the case, broken down.

Prints, per case, the instructions per function in order of first entry
and the total; writes the full trace (address, symbol+offset) to
build/bench/hit-<case>.txt.  --diff A,B prints the per-function
difference between two cases.
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
from bench import guest_files

OUT = os.path.join(BUILD, 'bench')

GDB_SCRIPT = r'''
import gdb
gdb.execute('set pagination off')
gdb.execute('set confirm off')
gdb.execute('target remote :%(port)d')
gdb.execute('hbreak *%(addr)s')
gdb.execute('continue')
gdb.execute('delete')
rsp = int(gdb.parse_and_eval('$rsp')) & 0xffffffffffffffff
ret = int(gdb.parse_and_eval('*(unsigned long *)$rsp')) & 0xffffffffffffffff
n = 0
with open(%(out)r, 'w') as f:
    while n < %(limit)d:
        pc = int(gdb.parse_and_eval('$pc')) & 0xffffffffffffffff
        sp = int(gdb.parse_and_eval('$rsp')) & 0xffffffffffffffff
        if pc == ret and sp > rsp:
            break
        f.write('%%x\n' %% pc)
        n += 1
        gdb.execute('stepi', to_string=True)
gdb.execute('kill')
'''


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Symbols:
    def __init__(self, obj, extra):
        syms = []
        out = subprocess.run(['nm', '-n', os.path.join(obj, 'vmlinux')],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'tTwW':
                syms.append((int(f[0], 16), f[2]))
        for addr, name in extra:
            syms.append((addr, name))
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    def lookup(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return '?', addr
        return self.names[i], addr - self.addrs[i]


def profile_case(arch, obj, case, timeout, limit):
    initrd = os.path.join(BUILD, 'initramfs-hitprofile.cpio.gz')
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
        timeout=timeout, extra_qemu=['-gdb', f'tcp:127.0.0.1:{port}'],
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
        with os.fdopen(fd, 'w') as f:
            f.write(GDB_SCRIPT % {'port': port, 'addr': '0x' + ready[0][1],
                                  'out': tracefile, 'limit': limit})
        gdb = subprocess.run(['gdb', '-nx', '-batch', '-ex',
                              'set architecture i386:x86-64',
                              '-x', script], capture_output=True,
                             text=True, timeout=timeout)
        os.unlink(script)
        with open(tracefile) as f:
            pcs = [int(x, 16) for x in f.read().split()]
        os.unlink(tracefile)
        if not pcs:
            print(f'error: gdb traced nothing:\n{gdb.stdout}{gdb.stderr}')
            return None
    finally:
        stop.set()
        guest.join()
    return ready[0][0], pcs, extra


def summarize(name, pcs, syms):
    per = collections.OrderedDict()
    lines = []
    for pc in pcs:
        fn, off = syms.lookup(pc)
        per[fn] = per.get(fn, 0) + 1
        lines.append(f'{pc:x} {fn}+0x{off:x}')
    with open(os.path.join(OUT, f'hit-{name}.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return per


def show(name, per):
    print(f'=== {name}: {sum(per.values())} instructions in one call')
    for fn, n in per.items():
        print(f'  {n:6d}  {fn}')


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--obj', default=os.path.join(BUILD, 'obj-bench'))
    ap.add_argument('--cases', default='2,3,6',
                    help='comma-separated bench case numbers')
    ap.add_argument('--diff', help='A,B: per function, case B minus case A')
    ap.add_argument('--timeout', type=int, default=600)
    ap.add_argument('--limit', type=int, default=50000,
                    help='most instructions to step in one call')
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(LOGS, exist_ok=True)
    # gdb steps the guest: TCG, and x86_64 (the architecture gdb is set to)
    os.environ['FBE_ACCEL'] = 'tcg'
    arch = arches.get('x86_64')
    results, rc = {}, 0
    for case in args.cases.split(','):
        r = profile_case(arch, args.obj, case, args.timeout, args.limit)
        if r is None:
            rc = 1
            continue
        name, pcs, extra = r
        per = summarize(name, pcs, Symbols(args.obj, extra))
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
