#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check: every guest job on the one kernel, scheduled across the CPUs.

The jobs (each a QEMU guest of its own, one host CPU each under
single-threaded TCG):

  ftrace<N>   a share of ftracetest (test.d less config/lists/known-failures)
  boot        kprobe_event= and function_event= on the command line
              (guest/jobs/boot), then the concurrency stress (guest/jobs/stress.sh)
  fuzz        the parser fuzzer (guest/jobs/fuzz.sh)
  fault       every allocation of each operation on the events failed in
              turn (guest/jobs/fault.sh)

The ftrace jobs boot with kmemleak=off (kmemleak's stack trace for every
allocation doubles a test's time under TCG); the boot and fuzz jobs,
which drive the series' code through its error paths and races, keep it.

Every job ends with a kmemleak scan, the taint flags and the whole dmesg,
judged by verdict.judge().  The boot and fuzz jobs are placed first, on the
least loaded CPU, longest first; then each CPU boots one ftracetest
guest that takes the cases from a queue shared by all of them
(testqueue.TestQueue, over a second serial port), longest first
(config/lists/test-weights: seconds each under TCG), a few at a time, until
none is left: however long a case takes on the day, the CPUs finish
together.  Every result is printed as it arrives.

  check.py [--tests T ...]   only those tests: cases of test.d (files or
                             directories) from the queue on every CPU,
                             others in one job
  check.py --only fuzz       only the fuzzer (make fuzz)
  check.py --only boot       only the boot job (boot parameters, stress, lockdown)
  check.py --only fault      only the fault job
  check.py --only ci         the boot and fault jobs and config/lists/ci-cases from the queue:
                             what CI runs on another architecture than x86_64
  check.py --deadline S      hand out no case after S seconds: the cases
                             left are skipped, not failed (CI's time budget)
"""

import argparse
import os
import subprocess
import sys
import threading
import time

from harness import arch as arches
from harness import paths
from harness import results
from harness.initramfs import FTRACE, make_base_initramfs, missing_tests
from harness.job import run_job
from harness.testqueue import TestQueue
from harness.verdict import Verdict

TOP, BUILD, LOGS = paths.TOP, paths.BUILD, paths.LOGS
TD = os.path.join(FTRACE, 'test.d')
BOOT_CMDLINE = ('kprobe_event=p:kprobes/boot_probe,vfs_read '
                'function_event="vfs_read(x64 file, NULL, size_t count);'
                'kernel_clone();do_filp_open(int dfd, string name+0[0]);'
                'vfs_read%return(count, string container_of(file->f_inode, '
                'struct proc_inode, vfs_inode)->pde->name, $retval)" '
                'trace_instance=boot_inst')
T0 = time.time()
print_lock = threading.Lock()


def say(msg):
    with print_lock:
        print(msg, flush=True)


def weights():
    w = {}
    for line in open(os.path.join(TOP, 'config/lists/test-weights')):
        f = line.split('#')[0].split()
        if len(f) == 2:
            w[f[0]] = float(f[1])
    return w


def not_run(arch, slow):
    """{test: why make check leaves it out}: config/lists/known-failures, and
    config/lists/slow-tests unless slow."""
    known, this = {}, arch
    for f, what in (('known-failures', 'known failure'), ('slow-tests', 'slow')):
        if f == 'slow-tests' and slow:
            continue
        for line in open(os.path.join(TOP, 'config', 'lists', f)):
            if line.strip() and not line.startswith('#'):
                name, _, reason = line.strip().partition(' ')
                # ARCH:path: on that architecture only
                arch, _, path = name.rpartition(':')
                if arch and arch != this.name:
                    continue
                known[path] = f'{what}{" on " + arch if arch else ""}, not run: {reason}'
    return known


def ci_case(t):
    """Whether CI runs t (a path in test.d) on another architecture:
    config/lists/ci-cases lists directories and files of test.d."""
    with open(os.path.join(TOP, 'config/lists/ci-cases')) as f:
        for line in f:
            line = line.split('#')[0].strip()
            if line and (t == line or t.startswith(line.rstrip('/') + '/')):
                return True
    return False


def in_test_d(tests):
    """The .tc files tests name (files or directories), relative to
    test.d, or None if one of them is outside it."""
    out = []
    for t in tests:
        p = os.path.abspath(t) if os.path.exists(t) else os.path.join(TD, t)
        p = os.path.normpath(p)
        if not (p == TD or p.startswith(TD + '/')) or not os.path.exists(p):
            return None
        if os.path.isdir(p):
            out += sorted(os.path.relpath(os.path.join(d, f), TD)
                          for d, _, fs in os.walk(p) for f in fs if f.endswith('.tc'))
        else:
            out.append(os.path.relpath(p, TD))
    return out


def build_guest_tools(arch):
    out = os.path.join(BUILD, 'guest-bin' + ('' if arch.name == 'x86_64' else '-' + arch.name))
    os.makedirs(out, exist_ok=True)
    bins = []
    for t in ('fevent-fuzz', 'fevent-stress', 'fevent-bpf', 'fevent-failnth'):
        src = os.path.join(TOP, 'guest/tools', t + '.c')
        dst = os.path.join(out, t)
        subprocess.run([arch.cc, '-static', '-O2', '-Wall', '-Wextra', '-Werror',
                        '-pthread', '-o', dst, src], check=True)
        bins.append(dst)
    return bins


class Job:
    def __init__(self, name, est, tests=('none',), kcmdline='', boot=(),
                 post=(), env=(), timeout=None, last=(), queue=None):
        self.name, self.est, self.tests = name, est, list(tests)
        self.queue = queue        # ftracetest cases from a shared queue
        self.kcmdline, self.boot, self.post = kcmdline, list(boot), list(post)
        # after the leak scan: what can not be undone (guest/jobs/last)
        self.last = list(last)
        # a job may take three times its estimate (make fuzz N=... grows it)
        self.env, self.timeout = list(env), timeout or max(2400, 3 * est + 300)
        self.verdict, self.seconds = None, 0


def plan(args, w):
    """[[Job]] per CPU."""
    cpus = args.jobs
    known = not_run(args.arch, args.slow)
    fuzz_env = [f'FUZZ_N={args.fuzz_n}', f'FUZZ_KN={args.fuzz_kn}',
                f'FUZZ_SEED={args.fuzz_seed}', f'FUZZ_EVERY={args.fuzz_every}',
                f'STRESS_SECS={args.stress_secs}']
    dbg = os.path.join(TOP, 'guest/jobs')
    fixed = []
    if args.only in (None, 'fuzz'):
        fixed.append(Job('fuzz', w.get('@fuzz', 300) * args.fuzz_n / 10000,
                         boot=[os.path.join(dbg, 'fuzz.sh')], env=fuzz_env))
    if args.only in (None, 'fault', 'ci'):
        fixed.append(Job('fault', w.get('@fault', 1000),
                         boot=[os.path.join(dbg, 'fault.sh')],
                         env=[f'FAULT_MAX={os.environ.get("FAULT_MAX", 35)}',
                              f'FAULT_TRACE={os.environ.get("FAULT_TRACE", "")}',
                              f'FAULT_OPS={os.environ.get("FAULT_OPS", "")}',
                              f'FAULT_NS={os.environ.get("FAULT_NS", "")}']))
    if args.only in (None, 'boot', 'ci'):
        fixed.append(Job('boot', w.get('@boot', 60) + args.stress_secs * 1.5,
                         kcmdline=BOOT_CMDLINE,
                         boot=sorted(os.path.join(TOP, 'guest/jobs/boot', f)
                                     for f in os.listdir(os.path.join(TOP, 'guest/jobs/boot'))
                                     if f.endswith('.sh')) +
                         [os.path.join(dbg, 'stress.sh')], env=fuzz_env,
                         last=[os.path.join(TOP, 'guest/jobs/last', f)
                               for f in sorted(os.listdir(os.path.join(TOP, 'guest/jobs/last')))
                               if f.endswith('.sh')]))
    load = [0.0] * cpus
    slots = [[] for _ in range(cpus)]
    for j in sorted(fixed, key=lambda j: -j.est):
        i = load.index(min(load))
        slots[i].append(j)
        load[i] += j.est + w.get('@guest', 40)
    skipped, queue = [], None
    if args.only in (None, 'ci'):
        tests = sorted(os.path.relpath(os.path.join(d, f), TD)
                       for d, _, fs in os.walk(TD) for f in fs if f.endswith('.tc'))
        if args.only == 'ci':
            tests = [t for t in tests if ci_case(t)]
        skipped = [(t, known[t]) for t in tests if t in known]
        tests = [t for t in tests if t not in known]
        queue = TestQueue(tests, w, cpus,
                          deadline=args.deadline and T0 + args.deadline)
        work = sum(queue.w.values())
        # The CPUs share the queue: each ends at about the same time
        end = (sum(load) + work + cpus * w.get('@guest', 40)) / cpus
        for i in range(cpus):
            slots[i].append(Job(f'ftrace{i}', max(0, end - load[i]),
                                kcmdline='kmemleak=off', queue=queue,
                                timeout=max(2400, 3 * work / cpus + 600)))
            load[i] = max(load[i], end)
    return slots, skipped, load, queue


def run_slot(args, jobs, base):
    for j in jobs:
        env = list(j.env)
        extra = [(b, '/fbe/boot/' + os.path.basename(b)) for b in j.boot]
        extra += [(b, '/fbe/post/' + os.path.basename(b)) for b in j.post]
        extra += [(b, '/fbe/last/' + os.path.basename(b)) for b in j.last]
        extra.append((os.path.join(TOP, 'guest/jobs/boot/lib'), '/fbe/boot/lib'))
        # make run's demo, which guest/jobs/boot/demo.sh runs
        extra.append((os.path.join(TOP, 'guest/demo'), '/fbe/demo'))
        extra += [(b, '/fbe/bin/' + os.path.basename(b)) for b in args.bins]
        if j.queue is not None and not len(j.queue):
            say(f'[{time.time() - T0:5.0f}s] === job {j.name} not started: '
                'the queue is empty')
            j.verdict = Verdict()
            continue
        say(f'[{time.time() - T0:5.0f}s] === job {j.name} starts '
            f'(about {j.est:.0f}s of tests)')
        try:
            j.verdict, j.seconds = run_job(
                args.arch, args.obj, j.name, j.tests, ' '.join(filter(None, (j.kcmdline, args.kcmdline))),
                extra, env, j.timeout, smp=args.smp, base=base,
                prefix=lambda n=j.name: f'[{time.time() - T0:5.0f}s {n}]',
                stall=args.stall, queue=j.queue)
        except Exception as e:  # a harness bug must not pass as a clean job
            j.verdict = Verdict()
            j.verdict.problems.append(f'harness error: {e!r}')
        v = j.verdict
        say(f'[{time.time() - T0:5.0f}s] === job {j.name} done in {j.seconds:.0f}s: '
            f'{v.npass} passed, {v.nfail} failed, {v.nskip} skipped')


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--obj', help="default: the architecture's make check kernel")
    ap.add_argument('--arch', help='default: $ARCH, else x86_64 (scripts/harness/arch.py)')
    ap.add_argument('--tests', nargs='*')
    ap.add_argument('--kcmdline', default='')
    ap.add_argument('--jobs', type=int, default=os.cpu_count())
    ap.add_argument('--smp', type=int, default=2, help='CPUs of each guest')
    ap.add_argument('--only', choices=['fuzz', 'boot', 'fault', 'ci'])
    ap.add_argument('--deadline', type=float,
                    help='seconds after which no case is handed out')
    ap.add_argument('--slow', action='store_true',
                    help='run config/lists/slow-tests too')
    ap.add_argument('--fuzz-n', type=int, default=int(os.environ.get('FUZZ_N', 10000)))
    ap.add_argument('--fuzz-kn', type=int, default=int(os.environ.get('FUZZ_KN', 1000)))
    ap.add_argument('--fuzz-seed', type=int, default=int(os.environ.get('FUZZ_SEED', 42)))
    ap.add_argument('--fuzz-every', type=int, default=int(os.environ.get('FUZZ_EVERY', 32)))
    ap.add_argument('--stress-secs', type=int,
                    default=int(os.environ.get('STRESS_SECS', 30)))
    ap.add_argument('--stall', type=int, default=900,
                    help='a guest silent this long is hung')
    args = ap.parse_args()
    args.arch = arches.get(args.arch)
    args.obj = args.obj or args.arch.obj(BUILD)
    missing = missing_tests(args.tests or [])
    if missing:
        # before any guest: a job with nothing to run would pass nothing
        sys.exit(f'error: no such test: {" ".join(missing)} (give paths inside '
                 f'{os.path.relpath(TD, TOP)}, relative to it, or paths on disk)')
    os.makedirs(LOGS, exist_ok=True)
    t = time.time()
    args.bins = build_guest_tools(args.arch)
    base = os.path.join(BUILD, f'initramfs-base-{os.getpid()}.cpio.gz')
    make_base_initramfs(args.arch, args.obj, base)
    say(f'=== phase initramfs: {time.time() - t:.0f}s '
        f'({os.path.getsize(base) >> 20} MiB shared by every job)')
    w = weights()
    inside = in_test_d(args.tests or [])
    if inside and len(inside) > 1 and args.jobs > 1:
        # Cases of test.d: from the queue, on every CPU
        queue = TestQueue(inside, w, args.jobs)
        n = min(args.jobs, len(inside))
        est = sum(queue.w.values()) / n
        slots = [[Job(f'check{i}', est, queue=queue, timeout=max(2400, 3 * est + 600))]
                 for i in range(n)]
        skipped, load = [], [est] * n
    elif args.tests:
        slots = [[Job('check', 0, tests=args.tests)]]
        skipped, load, queue = [], [0], None
    else:
        slots, skipped, load, queue = plan(args, w)
    if queue:
        say(f'ftracetest: {len(queue)} cases, about {sum(queue.w.values()):.0f}s, '
            f'from one queue')
    for i, s in enumerate(slots):
        say(f'cpu{i}: ' + ', '.join(f'{j.name} (~{j.est:.0f}s'
                                    f'{" from the queue" if j.queue else ""})' for j in s) +
            f'; about {load[i]:.0f}s')
    if args.only is None and not args.tests:
        say(f'fuzz seed {args.fuzz_seed} (FUZZ_SEED={args.fuzz_seed} reproduces it)')
    threads = [threading.Thread(target=run_slot, args=(args, s, base)) for s in slots]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    os.unlink(base)
    nfail = 0
    say('\n=== results by job')
    for s in slots:
        for j in s:
            v = j.verdict
            say(f'{j.name:8} {j.seconds:5.0f}s  {v.npass} passed, {v.nfail} failed, '
                f'{v.nskip} skipped' + ''.join(f'\n         error: {p}' for p in v.problems) +
                ''.join(f'\n         known report (config/lists/known-reports): {k}'
                        for k in v.known) +
                ''.join(f'\n         {r}: {n}' + (f'  # {c}' if c else '')
                        for n, r, c in v.results if r not in ('PASS', 'XFAIL', 'SKIP')))
            # the jobs of the CPUs overlap: their seconds are parts of
            # the "guests" phase, not added to it
            results.record(f'guests/{j.name}', arch=args.arch.name, passed=v.npass,
                           failed=v.nfail, skipped=v.nskip, seconds=round(j.seconds),
                           part=True, problems=v.problems + [
                               f'{r}: {n}' + (f'  # {c}' if c else '')
                               for n, r, c in v.results
                               if r not in ('PASS', 'XFAIL', 'SKIP')] or None)
            nfail += v.nfail
    # A case no guest took (they all died first) did not pass
    if queue and len(queue) and queue.expired:
        why = f'the time budget (--deadline {args.deadline:.0f}s) ran out'
        say(f'{len(queue)} ftracetest cases not run: {why}: ' + ', '.join(queue.left))
        results.record('guests/not-run', arch=args.arch.name, skipped=len(queue), reason=why)
    elif queue and len(queue):
        say(f'error: {len(queue)} ftracetest cases never ran: ' + ', '.join(queue.left))
        results.record('guests/not-run', arch=args.arch.name, failed=len(queue),
                       problems=['never ran: ' + ', '.join(queue.left)])
        nfail += len(queue)
    for t, reason in skipped:
        say(f'[      SKIP] {t}  # {reason}')
    if skipped:
        results.record('guests/not-run', arch=args.arch.name, skipped=len(skipped),
                       reason='config/lists/known-failures and config/lists/slow-tests')
    say(f'=== guests: {time.time() - T0:.0f}s')
    return 0 if nfail == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
