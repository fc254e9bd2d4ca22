#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Boot the built kernel under QEMU with a busybox initramfs.

  [ARCH=arm64] qemu.py check [--tests T ...] [--kcmdline ARGS] [--obj DIR] [--name NAME]
      One guest job: ftracetest (KTAP) and the given boot and post
      scripts, then the guest's own health check (kmemleak scan, taint
      flags, the whole dmesg).  Prints every result as it arrives and a
      final "N passed, N failed, N skipped" line.  make check runs many
      of these side by side (scripts/check.py).
  qemu.py run [--kcmdline ARGS]
      With a terminal on stdin: a root shell.  Without one: the demo in
      guest/demo, its output, then power off.

In the spirit of tools/testing/kunit/kunit.py: the exact QEMU command is
printed, the whole console log is kept under build/logs/, and the
verdict is one.  The harness is split as kunit_tool is:

  arch.py       one place per architecture: cross compiler, image, QEMU
                machine, CPU, console, the guest's user space
  initramfs.py  the guest's initramfs: user space, ftracetest, job files
  verdict.py    KTAP and the kernel's reports in a console: the verdict
  qemu.py       booting a guest, the test queue, a job, the command line

scripts/selftest.py tests each of them without a kernel.
"""

import argparse
import os
import re
import select
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch as arches  # noqa: E402
from initramfs import (FTRACE, make_base_initramfs, make_initramfs,  # noqa: E402,F401
                       missing_tests, clients_needed, guest_test_paths)
from verdict import (Verdict, bad_lines, clean, is_bad, judge,  # noqa: E402,F401
                     ktap_result, test_log)

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, 'build')
TREE = os.path.join(BUILD, 'linux')
LOGS = os.path.join(BUILD, 'logs')
CACHE = arches.CACHE
ACCEL_CACHE = os.path.join(CACHE, 'accel')
# The architecture of every guest this process boots: $ARCH (make check
# ARCH=arm64), else x86_64; check.py's --arch sets it.
ARCH = arches.current()


def set_arch(name):
    global ARCH
    ARCH = arches.select(name)


def kernel_image(obj):
    return os.path.join(obj, ARCH.image)


def default_obj():
    return ARCH.obj(BUILD)


def log(msg):
    print(msg, flush=True)


def accel_key():
    """What the KVM verdict depends on: QEMU's version and the host CPU."""
    try:
        ver = subprocess.run([ARCH.qemu, '--version'],
                             capture_output=True, text=True).stdout.split('\n')[0]
    except OSError:
        ver = '?'
    model = ''
    try:
        for line in open('/proc/cpuinfo'):
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    except OSError:
        pass
    return f'{ver} | {model}'


def kvm_usable():
    if os.environ.get('FBE_ACCEL') in ('tcg', 'kvm'):
        return os.environ['FBE_ACCEL'] == 'kvm'
    if not ARCH.kvm or not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return False
    try:
        accel, _, key = open(ACCEL_CACHE).read().strip().partition(' ')
        if key == accel_key():
            return accel == 'kvm'
    except OSError:
        pass
    return True


def remember_accel(accel):
    if os.environ.get('FBE_ACCEL'):
        return
    os.makedirs(CACHE, exist_ok=True)
    with open(ACCEL_CACHE, 'w') as f:
        f.write(f'{accel} {accel_key()}\n')


def qemu_cmd(obj, initrd, accel, cmdline, smp, mem):
    return ARCH.qemu_cmd(kernel_image(obj), initrd, accel, cmdline, smp, mem)


# Under KVM the kernel's first line comes within a second or two; on the
# hosts where KVM is broken, QEMU aborts at once or the guest never
# prints a kernel line.
KVM_FIRST_LINE = 10


def boot(obj, initrd, cmdline, logpath, timeout, smp=2, mem=2048,
         echo=False, extra_qemu=(), stall=1200, on_line=None, quiet=False,
         finished=None):
    """Boot and collect the console (escape sequences stripped).
    Returns (lines, status); on_line(line) is called for every line.
    finished(line), if given, says the guest is done: QEMU is stopped
    there (status 'done'), for a guest that halts without powering off."""
    accels = ['kvm', 'tcg'] if kvm_usable() else ['tcg']
    for accel in accels:
        cmd = qemu_cmd(obj, initrd, accel, cmdline, smp, mem) + list(extra_qemu)
        if not quiet or accel == 'tcg' and len(accels) > 1:
            log('$ ' + ' '.join(shlex.quote(c) for c in cmd))
        start = time.time()
        lines, status = [], 'timeout'
        seen_kernel = seen_init = False
        with open(logpath, 'w') as logf:
            logf.write('$ ' + ' '.join(shlex.quote(c) for c in cmd) + '\n')
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT)
            buf = b''
            last = time.time()
            try:
                while True:
                    now = time.time()
                    if now - start > timeout:
                        status = f'timeout after {timeout}s'
                        break
                    # ftracetest prints nothing while a test runs: a guest
                    # silent for this long is hung in one.  stall may be
                    # a function: the limit of the case running now.
                    limit = stall() if callable(stall) else stall
                    if now - last > limit:
                        status = f'no output for {limit:.0f}s'
                        break
                    if accel == 'kvm' and not seen_kernel and \
                            now - start > KVM_FIRST_LINE:
                        status = 'kvm-silent'
                        break
                    r, _, _ = select.select([p.stdout], [], [], 1.0)
                    if not r:
                        if p.poll() is not None:
                            status = f'qemu exited ({p.returncode})'
                            break
                        continue
                    chunk = os.read(p.stdout.fileno(), 65536)
                    if not chunk:
                        p.wait()
                        status = f'qemu exited ({p.returncode})'
                        break
                    buf += chunk
                    last = time.time()
                    *done, buf = buf.split(b'\n')
                    for raw in done:
                        s = clean(raw.decode('utf-8', 'replace'))
                        logf.write(s + '\n')
                        lines.append(s)
                        if echo:
                            print(s, flush=True)
                        if 'Linux version' in s or s.startswith('['):
                            seen_kernel = True
                        if 'FBE-INIT' in s:
                            seen_init = True
                        if on_line:
                            on_line(s)
                        if finished and finished(s):
                            status = 'done'
                    logf.flush()
                    if status == 'done':
                        break
            finally:
                if p.poll() is None:
                    p.kill()
                p.wait()
            if buf:
                lines.append(clean(buf.decode('utf-8', 'replace')))
                logf.write(lines[-1] + '\n')
        if accel == 'kvm' and not seen_init:
            log(f'KVM guest did not reach init ({status}): TCG from now on '
                f'(remembered in {ACCEL_CACHE})')
            remember_accel('tcg')
            continue
        if accel == 'kvm':
            remember_accel('kvm')
        if not quiet:
            log(f'guest ran {time.time() - start:.0f}s under {accel}')
        return lines, status
    return [], 'no-accel'


def show_tail(lines, idx=None, n=40):
    if idx is None:
        seg = lines[-n:]
    else:
        seg = lines[max(0, idx - 5):idx + n]
    for s in seg:
        log('  | ' + s)


def cmdline_for(kcmdline):
    """The kernel command line of a check guest.  loglevel=5 puts
    KERN_WARNING on the console, so a WARNING or lockdep report shows up
    among the test results.  watchdog_thresh=60 (the most it takes):
    the soft lockup detector fires after 2 x 60 s instead of 2 x 10 s.
    Under TCG a CPU tracing every function with the function graph
    tracer went 26 s without scheduling its watchdog thread in a base
    ftracetest case ("ftrace - function graph filters"): emulation 50 to 100 times
    slower than the hardware the default is set for, not a lockup."""
    return (f'console={ARCH.console} panic=-1 oops=panic loglevel=5 '
            'ftrace_dump_on_oops watchdog_thresh=60 ' + kcmdline).strip()


def report(name, lines, v, logpath):
    """The verdict of one job, for a person: failures with their logs."""
    for test, res, comment in v.results:
        if res not in ('PASS', 'XFAIL', 'SKIP'):
            log(f'--- {name}: {test}: {res}' + (f'  # {comment}' if comment else ''))
            for s in test_log(lines, test):
                log('  | ' + s)
    for s in v.known:
        log(f'--- {name}: known report (config/known-reports): {s}')
    for p in v.problems:
        log(f'--- {name}: error: {p}')
    if v.problems:
        bad = bad_lines([s for s in lines])
        show_tail(lines, bad[0] if bad else None)
        log(f'    console log: {os.path.relpath(logpath, TOP)}')


def job_files(args):
    extra = [(os.path.abspath(b), '/fbe/boot/' + os.path.basename(b))
             for b in (args.boot_tests or [])]
    extra += [(os.path.abspath(b), '/fbe/post/' + os.path.basename(b))
              for b in (args.post_tests or [])]
    for e in args.extra or []:
        src, _, dst = e.partition(':')
        extra.append((os.path.abspath(src), dst or '/fbe/bin/' + os.path.basename(src)))
    return extra


def read_test(t):
    """The text of test.d/t, or '' if there is no such file."""
    try:
        with open(os.path.join(FTRACE, 'test.d', t)) as f:
            return f.read()
    except OSError:
        return ''


class TestQueue:
    """The ftracetest cases of make check (paths in test.d), handed out
    to whichever guest asks first, longest first (weights: seconds each),
    a few at a time: a chunk holds about a third of what is left per CPU,
    or one case, so that the first chunks are single long cases, the
    last ones a few short ones (MIN_CHUNK), and the CPUs finish together
    however long a case takes on the day.  given[job] lists what each job
    was handed; clients tells whether a case needs perf or trace-cmd."""

    # Each ftracetest run costs 2 to 3 s of its own under TCG: the last
    # chunks are short tests worth about this many seconds together.
    MIN_CHUNK = 20

    def __init__(self, tests, weights, ncpus, deadline=None):
        self.w = {t: weights.get(t, 10) for t in tests}
        # time.time() after which nothing more is handed out (CI's budget)
        self.deadline = deadline
        self.expired = False
        # ftracetest runs a case with "# flags: instance" twice, the
        # second time in an instance: two results
        self.nres = {t: 1 + bool(re.search(r'^#.*flags:.*instance',
                                           read_test(t), re.M)) for t in tests}
        self.left = sorted(tests, key=lambda t: (-self.w[t], t))
        self.ncpus = max(1, ncpus)
        self.given = {}
        self.clients = clients_needed([os.path.join(FTRACE, 'test.d', t) for t in tests])
        self.lock = threading.Lock()
        # job: (time handed, its chunk); the chunks done: seconds, weight
        self.current = {}
        self.done_secs = self.done_weight = 0.0

    def speed(self):
        """How much slower than its weights this machine runs the cases,
        from the chunks done so far (1 until one is done, never less)."""
        with self.lock:
            if self.done_weight < 30:
                return 1.0
            return max(1.0, self.done_secs / self.done_weight)

    def stall(self, job, base):
        """How long job's guest may print nothing: base, or three times
        the longest case it runs now at this machine's speed if that is
        more.  A case that takes 130 s on the machine of the weights
        took 300 s on one twice as slow, and one that printed nothing
        for 900 s there was still running."""
        with self.lock:
            cur = self.current.get(job)
            longest = max((self.w[t] for t in cur[1]), default=0) if cur else 0
        return max(base, 3 * longest * self.speed())

    def take(self, job):
        with self.lock:
            if self.deadline is not None and time.time() > self.deadline:
                self.expired = True
                return []
            now = time.time()
            prev = self.current.pop(job, None)
            if prev:
                self.done_secs += now - prev[0]
                self.done_weight += sum(self.w[t] for t in prev[1])
            target = max(sum(self.w[t] for t in self.left) / (3 * self.ncpus),
                         self.MIN_CHUNK)
            chunk, load = [], 0
            while self.left and (not chunk or load + self.w[self.left[0]] <= target):
                chunk.append(self.left.pop(0))
                load += self.w[chunk[-1]]
            self.given.setdefault(job, []).extend(chunk)
            if chunk:
                self.current[job] = (now, chunk)
            return chunk

    def results(self, job):
        """How many results the cases handed to job report."""
        with self.lock:
            return sum(self.nres[t] for t in self.given.get(job, []))

    def __len__(self):
        with self.lock:
            return len(self.left)


def serve_queue(srv, queue, job, say):
    """Answer a guest's "next" on its second serial port with a line of
    test paths from queue, or "done".  Every QEMU that boot() starts for
    the job connects in turn (a KVM guest that does not come up is
    followed by a TCG one), so it serves one connection after another
    until run_job() closes srv."""
    while True:
        try:
            conn, _ = srv.accept()
        except OSError:
            return
        with conn, conn.makefile('rwb') as f:
            for raw in f:
                if raw.strip() != b'next':
                    continue
                chunk = queue.take(job)
                if chunk:
                    say(f'{job} takes {len(chunk)}: ' + ', '.join(chunk) +
                        f' ({len(queue)} left)')
                f.write((' '.join('/ftrace/test.d/' + t for t in chunk) or
                         'done').encode() + b'\n')
                f.flush()


def run_job(obj, name, tests, kcmdline='', extra=(), env=(), timeout=1800,
            smp=2, mem=2048, base=None, prefix=None,
            stall=1200, queue=None):
    """Build the job's initramfs, boot it, stream its results, judge it.
    With a TestQueue instead of tests, the guest takes its tests from
    the queue as it goes (serve_queue()).  Returns (verdict, seconds)."""
    os.makedirs(LOGS, exist_ok=True)
    initrd = os.path.join(BUILD, f'initramfs-{name}-{os.getpid()}.cpio.gz')
    extra = list(extra)
    envfile = None
    if env:
        fd, envfile = tempfile.mkstemp(prefix='fbe-env-')
        with os.fdopen(fd, 'w') as f:
            for e in env:
                k, _, v = e.partition('=')
                f.write(f'{k}={shlex.quote(v)}\n')
        extra.append((envfile, '/fbe/env'))
    try:
        if queue is not None:
            tests = ['@queue']
        make_initramfs(obj, 'check', tests, initrd, extra, base=base,
                       clients=queue is not None and queue.clients)
    finally:
        if envfile:
            os.unlink(envfile)
    extra_qemu, srv, sockdir = [], None, None
    if queue is not None:
        sockdir = tempfile.mkdtemp(prefix='fbe-queue-')
        sock = os.path.join(sockdir, 'queue')
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(sock)
        srv.listen(1)
        srv.settimeout(timeout)
        extra_qemu = ARCH.queue_args(sock)
        threading.Thread(target=serve_queue, daemon=True,
                         args=(srv, queue, name,
                               lambda m: log(f'{prefix()} {m}'))).start()
    logpath = os.path.join(LOGS, f'console-{name}.log')
    start = time.time()
    prefix = prefix or (lambda: f'[{name} {time.time() - start:4.0f}s]')

    times = []                # (test, seconds since the previous result)
    last = [start]

    def on_line(s):
        r = ktap_result(s)
        if r or 'FBE-INIT' in s or 'FBE-DONE' in s or is_bad(s):
            log(f'{prefix()} {s.strip()}')
        if 'FBE-INIT' in s or r:
            now = time.time()
            times.append((r[0] if r else '@guest', now - last[0]))
            last[0] = now

    cmdline = cmdline_for(kcmdline)
    accel = 'kvm' if kvm_usable() else 'tcg'
    log(f'{prefix()} $ ' + ' '.join(shlex.quote(c) for c in
                                     qemu_cmd(obj, initrd, accel, cmdline, smp, mem) +
                                     extra_qemu))
    try:
        limit = stall if queue is None else (lambda: queue.stall(name, stall))
        lines, status = boot(obj, initrd, cmdline, logpath, timeout, smp=smp,
                             mem=mem, on_line=on_line, quiet=True, stall=limit,
                             extra_qemu=extra_qemu)
    finally:
        if srv:
            srv.close()
            shutil.rmtree(sockdir)
    elapsed = time.time() - start
    os.unlink(initrd)
    # What each result took, for config/test-weights
    with open(os.path.join(LOGS, f'test-times-{name}'), 'w') as f:
        for test, secs in times:
            f.write(f'{secs:7.1f} {test}\n')
    if queue is not None:
        v = judge(lines, status, handed=queue.results(name))
    else:
        v = judge(lines, status, ftracetest=bool(tests) and list(tests) != ['none'])
    report(name, lines, v, logpath)
    return v, elapsed


def cmd_check(args):
    v, elapsed = run_job(args.obj, args.name, args.tests or ['none'],
                         args.kcmdline, job_files(args), args.env or (),
                         args.timeout, args.smp, args.mem)
    with open(os.path.join(LOGS, 'times'), 'a') as f:
        f.write(f'guest-{args.name} {elapsed:.0f}\n')
    if args.summary:
        with open(args.summary, 'a') as f:
            f.write(f'{v.npass} {v.nfail} {v.nskip}\n')
    log(f'{v.npass} passed, {v.nfail} failed, {v.nskip} skipped')
    return 0 if v.ok else 1


def cmd_run(args):
    obj = args.obj
    os.makedirs(LOGS, exist_ok=True)
    interactive = sys.stdin.isatty() and not args.demo
    initrd = os.path.join(BUILD, 'initramfs-run.cpio.gz')
    demo = os.path.abspath(args.script or os.path.join(TOP, 'guest/demo'))
    make_initramfs(obj, 'shell' if interactive else 'run', [], initrd,
                   extra_files=[(demo, '/fbe/demo')])
    cmdline = (f'console={ARCH.console} panic=-1 loglevel=5 ' +
               args.kcmdline).strip()
    if interactive:
        accel = 'kvm' if kvm_usable() else 'tcg'
        cmd = qemu_cmd(obj, initrd, accel, cmdline, 2, 2048)
        log('$ ' + ' '.join(shlex.quote(c) for c in cmd))
        return subprocess.call(cmd)
    logpath = os.path.join(LOGS, 'console-run.log')
    lines, status = boot(obj, initrd, cmdline, logpath, args.timeout, echo=True)
    bad = bad_lines(lines)
    if bad:
        log('error: the kernel reported a problem:')
        show_tail(lines, bad[0])
        return 1
    if not any('FBE-DONE rc=0' in s for s in lines):
        log(f'error: the demo did not finish cleanly ({status}); log: {logpath}')
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    for name in ('check', 'run'):
        p = sub.add_parser(name)
        p.add_argument('--obj')
        p.add_argument('--arch', help='default: $ARCH, else x86_64')
        p.add_argument('--kcmdline', default='')
        p.add_argument('--timeout', type=int, default=1800)
        p.add_argument('--smp', type=int, default=2)
        p.add_argument('-v', '--verbose', action='store_true')
    c = sub.choices['check']
    c.add_argument('--tests', nargs='*')
    c.add_argument('--name', default='check')
    c.add_argument('--boot-tests', nargs='*',
                   help='guest scripts printing KTAP, run before ftracetest')
    c.add_argument('--post-tests', nargs='*',
                   help='guest scripts printing KTAP, run after ftracetest')
    c.add_argument('--extra', nargs='*', metavar='SRC[:DST]',
                   help='more files for the guest (default DST: /fbe/bin/)')
    c.add_argument('--env', nargs='*', metavar='VAR=VALUE',
                   help='variables for the guest scripts')
    c.add_argument('--mem', type=int, default=2048, help='guest memory (MiB)')
    c.add_argument('--summary', help='append "pass fail skip" to this file')
    sub.choices['run'].add_argument('--demo', action='store_true',
                                    help='run the demo even on a terminal')
    sub.choices['run'].add_argument('--script',
                                    help='a guest script to run instead of guest/demo')
    args = ap.parse_args()
    set_arch(args.arch)
    args.obj = args.obj or default_obj()
    if not os.path.exists(kernel_image(args.obj)):
        sys.exit('error: no kernel built (make build)')
    sys.exit(cmd_check(args) if args.cmd == 'check' else cmd_run(args))


if __name__ == '__main__':
    main()
