#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Boot the built kernel under QEMU with a busybox initramfs.

  qemu.py check [--tests T ...] [--kcmdline ARGS] [--obj DIR] [--name NAME]
      One guest job: ftracetest (KTAP) and the given boot and post
      scripts, then the guest's own health check (kmemleak scan, taint
      flags, the whole dmesg).  Prints every result as it arrives and a
      final "N passed, N failed, N skipped" line.  make check runs many
      of these side by side (scripts/check.py).
  qemu.py run [--kcmdline ARGS]
      With a terminal on stdin: a root shell.  Without one: the demo in
      guest/demo, its output, then power off.

In the spirit of tools/testing/kunit/kunit.py: the exact QEMU command is
printed, the whole console log is kept under build/logs/, and judge()
turns a console into one verdict: a failing test, a kernel report (panic,
oops, BUG, WARNING, KASAN, UBSAN, lockdep, RCU stall, leak) during a test
or anywhere in dmesg, a tainted kernel, a guest that crashed, hung or
never started, or a missing summary all fail it.
scripts/selftest.py feeds it canned consoles of each kind.
"""

import argparse
import gzip
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

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, 'build')
TREE = os.path.join(BUILD, 'linux')
LOGS = os.path.join(BUILD, 'logs')
FTRACE = os.path.join(TREE, 'tools/testing/selftests/ftrace')
CACHE = os.environ.get('FBE_CACHE') or os.path.join(
    os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'),
    'function-events')
ACCEL_CACHE = os.path.join(CACHE, 'accel')

# What in a console log means the kernel is not healthy.
BAD = re.compile(r'(Kernel panic|BUG:|Oops|WARNING:|general protection fault|'
                 r'UBSAN:|KASAN:|possible recursive locking|'
                 r'possible circular locking|inconsistent lock state|'
                 r'suspicious RCU usage|rcu_sched self-detected stall|'
                 r'rcu: INFO: |unreferenced object|kmemleak: .*suspected|'
                 r'kernel BUG at|blocked for more than|'
                 r'soft lockup|hard LOCKUP)')
# A few of those words also appear in harmless lines.
BENIGN = re.compile(r'(FBE-|^# |^ok |^not ok |Testing .*PASSED|'
                    r'TAINT_|ftrace_dump_on_oops)')
KTAP_RESULT = re.compile(r'^(ok|not ok) (\d+) (.*?)(?:\s+# (.*))?$')
# Terminal escape sequences (the firmware and the kernel's console
# both send some) and carriage returns.
ESCAPES = re.compile(r'\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()#][0-9A-Za-z]|'
                     r'\x1b[=>cDEHM78]|\r')
# /proc/sys/kernel/tainted, bit by bit (Documentation/admin-guide/tainted-kernels.rst)
TAINT_FLAGS = 'PFSRMBUDAWCIOELKXTN'
# E (an unsigned module): the kernel's lockdown LSM selects MODULE_SIG and
# the harness does not sign its modules (config/base.config).  It says
# nothing about the code under test; every other flag fails the job.
TAINT_ALLOWED = 1 << TAINT_FLAGS.index('E')


def log(msg):
    print(msg, flush=True)


def clean(s):
    return ESCAPES.sub('', s)


def taint_names(value):
    return ''.join(TAINT_FLAGS[i] for i in range(len(TAINT_FLAGS))
                   if value >> i & 1) or '-'


def busybox_path():
    for p in ('/bin/busybox', '/usr/bin/busybox'):
        if os.path.exists(p):
            out = subprocess.run(['file', '-L', p], capture_output=True,
                                 text=True).stdout if shutil.which('file') else ''
            if 'dynamically' in out:
                continue
            return p
    sys.exit('error: busybox-static is not installed (make deps)')


def write_cpio_gz(stage, out):
    files = subprocess.run(['find', '.', '-mindepth', '1'], cwd=stage,
                           capture_output=True, text=True, check=True).stdout
    cpio = subprocess.run(['cpio', '-o', '-H', 'newc', '--quiet',
                           '--owner=0:0'], cwd=stage, input=files.encode(),
                          capture_output=True, check=True).stdout
    with gzip.open(out, 'wb', compresslevel=1) as f:
        f.write(cpio)


def copy_with_libs(stage, path, dst):
    """Copy the host program or library at path to dst in stage, with the
    shared libraries ldd says it needs."""
    d = os.path.join(stage, dst.lstrip('/'))
    os.makedirs(os.path.dirname(d), exist_ok=True)
    if not os.path.exists(d):
        shutil.copy2(os.path.realpath(path), d)
    ldd = subprocess.run(['ldd', path], capture_output=True, text=True).stdout
    for lib in re.findall(r'(/\S+) \(0x', ldd):
        d = os.path.join(stage, lib.lstrip('/'))
        if not os.path.exists(d):
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copy2(os.path.realpath(lib), d)


# Debian's own clients, for the tests that call require_program on them
# (test.d/functions): perf (linux-perf) and trace-cmd, with libtraceevent's
# plugins, which trace-cmd loads to print some events.
CLIENTS = ('perf', 'trace-cmd')
PLUGINS = '/usr/lib/x86_64-linux-gnu/traceevent/plugins'


def clients_needed(tests):
    """Whether any of the tests (files or directories on the host) runs
    a client: a .tc that calls require_program with one of CLIENTS."""
    pat = re.compile(r'^\s*require_program\b.*\b(' +
                     '|'.join(map(re.escape, CLIENTS)) + r')\b', re.M)
    files = []
    for t in tests:
        if os.path.isdir(t):
            files += [os.path.join(d, f) for d, _, fs in os.walk(t)
                      for f in fs if f.endswith('.tc')]
        elif os.path.isfile(t):
            files.append(t)
    for f in files:
        with open(f, errors='replace') as fh:
            if pat.search(fh.read()):
                return True
    return False


CLIENTS_LOCK = threading.Lock()


def make_clients_archive(out):
    """An archive of the clients and their libraries, appended to the
    initramfs of the jobs that need them (30 MB unpacked: the kernel
    unpacks it in about a second, where copying the tree in the guest
    took minutes).  Rebuilt only when a client's package changes; the
    jobs of both CPUs may ask for it at once."""
    with CLIENTS_LOCK:
        return _make_clients_archive(out)


def _make_clients_archive(out):
    paths = []
    for c in CLIENTS:
        p = shutil.which(c)
        if not p:
            raise RuntimeError(f'{c} is not installed (make deps: linux-perf, trace-cmd)')
        paths.append(p)
    key = ' '.join(f'{p}:{os.stat(p).st_mtime_ns}' for p in paths)
    stamp = out + '.key'
    if os.path.exists(out) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == key:
                return out
    stage = tempfile.mkdtemp(prefix='fbe-clients-')
    try:
        for p in paths:
            copy_with_libs(stage, p, '/usr/bin/' + os.path.basename(p))
        if os.path.isdir(PLUGINS):
            for f in sorted(os.listdir(PLUGINS)):
                copy_with_libs(stage, os.path.join(PLUGINS, f),
                               os.path.join(PLUGINS, f))
        write_cpio_gz(stage, out + '.tmp')
        os.replace(out + '.tmp', out)
        with open(stamp, 'w') as f:
            f.write(key)
    finally:
        shutil.rmtree(stage)
    return out


def make_base_initramfs(obj, out):
    """busybox, dash, init, ftracetest and the modules: what every job
    shares.  A job's own files go into a second archive appended to it
    (the kernel unpacks concatenated archives in order)."""
    stage = tempfile.mkdtemp(prefix='fbe-initramfs-')
    try:
        for d in ('bin', 'sbin', 'usr/bin', 'usr/sbin', 'proc', 'sys', 'dev',
                  'tmp', 'etc', 'fbe', 'root', 'lib/modules'):
            os.makedirs(os.path.join(stage, d), exist_ok=True)
        bb = busybox_path()
        shutil.copy2(bb, os.path.join(stage, 'bin/busybox'))
        applets = subprocess.run([bb, '--list-full'], capture_output=True,
                                 text=True, check=True).stdout.split()
        # /bin/sh is Debian's dash, as where ftracetest is usually run:
        # busybox ash runs applets by re-executing /proc/self/exe, so
        # sched_process_exec would never see "ping" (the inter-event
        # dynamic string tests), and add_remove_uprobe.tc probes the
        # shell's text mapping, which must show up as .../bin/sh.
        host_progs = {'bin/sh': shutil.which('dash') or bb}
        for a in applets:
            dst = os.path.join(stage, a)
            if not os.path.exists(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                os.symlink('/bin/busybox', dst)
        # Programs ftracetest needs that busybox lacks: chrt (wakeup
        # tracer tests) and nice (inter-event trigger tests), with their
        # shared libraries.
        for prog in ('chrt', 'nice'):
            if shutil.which(prog):
                host_progs['usr/bin/' + prog] = shutil.which(prog)
        for dst, path in host_progs.items():
            if os.path.lexists(os.path.join(stage, dst)):
                os.remove(os.path.join(stage, dst))
            copy_with_libs(stage, path, dst)
        shutil.copy2(os.path.join(TOP, 'guest/init'), os.path.join(stage, 'init'))
        shutil.copy2(os.path.join(TOP, 'guest/kmemleak.sh'),
                     os.path.join(stage, 'fbe/kmemleak.sh'))
        # test_ownership.tc needs a user and a group other than root
        with open(os.path.join(stage, 'etc/passwd'), 'w') as f:
            f.write('root:x:0:0:root:/root:/bin/sh\n'
                    'tracer:x:1000:1000:tracer:/:/bin/sh\n')
        with open(os.path.join(stage, 'etc/group'), 'w') as f:
            f.write('root:x:0:\ntracing:x:1000:\n')
        # ftracetest and its test.d, as in the tree.
        shutil.copytree(FTRACE, os.path.join(stage, 'ftrace'), symlinks=True)
        mods = os.path.join(obj, 'modinst/lib/modules')
        if os.path.isdir(mods):
            shutil.copytree(mods, os.path.join(stage, 'lib/modules'),
                            dirs_exist_ok=True, symlinks=True)
        write_cpio_gz(stage, out)
    finally:
        shutil.rmtree(stage)


def missing_tests(tests):
    """The test arguments that name nothing: neither a path on disk nor
    one relative to test.d."""
    td = os.path.join(FTRACE, 'test.d')
    return [t for t in tests if t != 'none' and not os.path.exists(t) and
            not os.path.exists(os.path.join(td, t))]


def guest_test_paths(tests):
    """Map test arguments to guest paths; the ones outside test.d are
    returned as (host path, guest path) to copy into test.d/ext/, where
    the helpers in test.d/functions apply."""
    guest, copies = [], []
    td = os.path.join(FTRACE, 'test.d')
    for t in tests:
        if t == 'none':
            continue
        p = os.path.abspath(t)
        if not os.path.exists(p) and os.path.exists(os.path.join(td, t)):
            p = os.path.join(td, t)
        if not os.path.exists(p):
            raise ValueError(f'no such test: {t}')
        if p == td or p.startswith(td + '/'):
            guest.append('/ftrace/test.d' + p[len(td):])
            continue
        dst = '/ftrace/test.d/ext/' + os.path.basename(p)
        copies.append((p, dst))
        guest.append(dst)
    return guest, copies


def make_initramfs(obj, mode, tests, out, extra_files=(), base=None,
                   clients=False):
    """The base archive (built here unless given) plus the job's own:
    /fbe/mode, /fbe/tests and extra_files [(host, guest)], and perf and
    trace-cmd if a test needs them or clients is set.  tests ['@queue']:
    the guest takes them from the host (TestQueue).  Returns the guest
    test paths."""
    if list(tests) == ['@queue']:
        guest_tests, copies = ['@queue'], []
        tests = []
    else:
        guest_tests, copies = guest_test_paths(tests)
    stage = tempfile.mkdtemp(prefix='fbe-job-')
    try:
        os.makedirs(os.path.join(stage, 'fbe'))
        with open(os.path.join(stage, 'fbe/mode'), 'w') as f:
            f.write(mode + '\n')
        with open(os.path.join(stage, 'fbe/tests'), 'w') as f:
            f.write((' '.join(guest_tests) if guest_tests else 'none') + '\n')
        for src, dst in list(extra_files) + copies:
            d = os.path.join(stage, dst.lstrip('/'))
            os.makedirs(os.path.dirname(d), exist_ok=True)
            if os.path.isdir(src):
                shutil.copytree(src, d)
            else:
                shutil.copy2(src, d)
        job = out + '.job'
        write_cpio_gz(stage, job)
    finally:
        shutil.rmtree(stage)
    own_base = base is None
    if own_base:
        base = out + '.base'
        make_base_initramfs(obj, base)
    parts = [base, job]
    td = os.path.join(FTRACE, 'test.d')
    if clients or clients_needed([t if os.path.exists(t) else os.path.join(td, t)
                                  for t in tests if t != 'none']):
        parts.insert(1, make_clients_archive(os.path.join(BUILD, 'clients.cpio.gz')))
    with open(out, 'wb') as f:
        for part in parts:
            with open(part, 'rb') as p:
                shutil.copyfileobj(p, f)
    os.unlink(job)
    if own_base:
        os.unlink(base)
    return guest_tests


def accel_key():
    """What the KVM verdict depends on: QEMU's version and the host CPU."""
    try:
        ver = subprocess.run(['qemu-system-x86_64', '--version'],
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
    if not os.access('/dev/kvm', os.R_OK | os.W_OK):
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
    cpu = 'host' if accel == 'kvm' else 'max'
    # Multi-threaded TCG races with the kernel's cross-CPU text patching
    # (ftrace, static keys): an int3 left by text_poke_bp() is seen after
    # its handler is gone and oopses.  Single-threaded TCG does not race.
    if accel == 'tcg':
        accel = 'tcg,thread=single'
    return ['qemu-system-x86_64', '-machine', 'q35', '-accel', accel,
            '-cpu', cpu, '-smp', str(smp), '-m', str(mem),
            '-kernel', os.path.join(obj, 'arch/x86/boot/bzImage'),
            '-initrd', initrd, '-append', cmdline,
            '-nographic', '-no-reboot', '-nic', 'none']


# Under KVM the kernel's first line comes within a second or two; on the
# hosts where KVM is broken, QEMU aborts at once or the guest never
# prints a kernel line.
KVM_FIRST_LINE = 10


def boot(obj, initrd, cmdline, logpath, timeout, smp=2, mem=2048,
         echo=False, extra_qemu=(), stall=1200, on_line=None, quiet=False):
    """Boot and collect the console (escape sequences stripped).
    Returns (lines, status); on_line(line) is called for every line."""
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
                    # silent for this long is hung in one.
                    if now - last > stall:
                        status = f'no output for {stall}s'
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
                    logf.flush()
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


def known_reports(path=os.path.join(TOP, 'config/known-reports')):
    """[(regex, reason)] of config/known-reports."""
    out = []
    try:
        for line in open(path):
            if line.strip() and not line.startswith('#'):
                pat, _, reason = line.rstrip('\n').partition('\t')
                out.append((re.compile(pat), reason.strip()))
    except OSError:
        pass
    return out


KNOWN_REPORTS = known_reports()


def known_report(s):
    for pat, reason in KNOWN_REPORTS:
        if pat.search(s):
            return reason
    return None


def is_bad(s):
    return bool(BAD.search(s)) and not BENIGN.search(s) and not known_report(s)


def bad_lines(lines):
    return [i for i, s in enumerate(lines) if is_bad(s)]


def show_tail(lines, idx=None, n=40):
    if idx is None:
        seg = lines[-n:]
    else:
        seg = lines[max(0, idx - 5):idx + n]
    for s in seg:
        log('  | ' + s)


def ktap_result(s):
    """(name, result, comment) of a KTAP result line, else None.  "not
    ok" is a failure whatever its directive: ftracetest reports
    UNSUPPORTED and UNTESTED as "ok ... # SKIP"."""
    m = KTAP_RESULT.match(s.strip())
    if not m:
        return None
    ok, _, name, comment = m.groups()
    comment = (comment or '').strip()
    if ok == 'ok':
        if comment.upper().startswith('SKIP'):
            res = 'SKIP'
        elif comment.upper().startswith('XFAIL'):
            res = 'XFAIL'
        else:
            res = 'PASS'
    else:
        res = comment.split()[0].upper() if comment else 'FAIL'
        if res in ('SKIP', 'XFAIL', 'TODO'):
            res = 'FAIL'
    return name.strip(), res, comment


def parse_ktap(lines):
    """Return [(name, result, comment)] from the KTAP output."""
    return [r for r in map(ktap_result, lines) if r]


class Verdict:
    """What judge() found in one guest job's console."""

    def __init__(self):
        self.results = []     # [(name, result, comment)]
        self.problems = []    # failures not tied to one test
        self.known = []       # known reports (config/known-reports) seen
        self.planned = 0

    @property
    def npass(self):
        return sum(r in ('PASS', 'XFAIL') for _, r, _ in self.results)

    @property
    def nskip(self):
        return sum(r == 'SKIP' for _, r, _ in self.results)

    @property
    def nfail(self):
        return sum(r not in ('PASS', 'XFAIL', 'SKIP') for _, r, _ in self.results) + \
            len(self.problems)

    @property
    def ok(self):
        return self.nfail == 0


def judge(lines, status='', ftracetest=True, handed=None):
    """One verdict for a guest job's console.

    A kernel report on the console fails the test that was running (the
    next one to report a result: ftracetest prints a result after its
    test) or, outside any test, the job.  The guest ends with its taint
    flags and the whole dmesg between FBE-DMESG markers: a report there
    that the console did not show, or any taint, fails the job.  So do a
    guest that never reached init, did not finish, announced more results
    than it gave, or ran ftracetest without its summary line.  handed:
    how many results the cases the guest took from a TestQueue give (a
    case with "# flags: instance" gives two); the summaries of its
    ftracetest runs must count as many."""
    v = Verdict()
    console, dmesg, in_dmesg = [], [], False
    for s in lines:
        s = clean(s)
        if 'FBE-DMESG-BEGIN' in s:
            in_dmesg = True
        elif 'FBE-DMESG-END' in s:
            in_dmesg = False
        elif in_dmesg and not s.startswith('FBE-'):
            dmesg.append(s)
        else:
            console.append(s)
    pending = []              # kernel reports waiting for the next result
    seen_reports = set()
    for s in console:
        r = ktap_result(s)
        if r:
            name, res, comment = r
            if pending and res in ('PASS', 'XFAIL', 'SKIP'):
                res, comment = 'FAIL', 'kernel: ' + pending[0]
            v.results.append((name, res, comment))
            pending = []
            continue
        m = re.match(r'^\s*1\.\.(\d+)', s)
        if m:
            v.planned += int(m.group(1))
        if BAD.search(s) and known_report(s):
            v.known.append(s.strip())
        if is_bad(s):
            key = re.sub(r'^\[[ 0-9.]*\]\s*', '', s)
            seen_reports.add(key)
            pending.append(s.strip())
    if pending:
        v.problems.append(f'kernel report after the last result: {pending[0]}')
    if not any('FBE-INIT' in s for s in console):
        v.problems.append(f'the guest never reached init ({status or "no output"})')
    done = [s for s in console if 'FBE-DONE' in s]
    if not done:
        v.problems.append(f'the guest did not finish ({status or "no FBE-DONE"}) '
                          f'after {len(v.results)} results')
    else:
        m = re.search(r'rc=(\d+)', done[-1])
        rc = int(m.group(1)) if m else 1
        if rc and v.ok:
            v.problems.append(f'the guest scripts exited with rc={rc} '
                              'and no failed result')
    if v.planned != len(v.results):
        v.problems.append(f'KTAP plans announce {v.planned} results, '
                          f'{len(v.results)} reported')
    if handed is not None:
        ftracetest = handed > 0
        counted = sum(sum(map(int, re.findall(r':(\d+)', s)))
                      for s in console if s.startswith('# Totals:'))
        if done and counted != handed:
            v.problems.append(f'handed ftracetest cases for {handed} results, '
                              f'its summaries count {counted}')
    if ftracetest and done and not any(s.startswith('# Totals:') for s in console):
        v.problems.append('ftracetest printed no summary (# Totals:)')
    taint = [s for s in console if s.startswith('FBE-TAINT')]
    if done and not taint:
        v.problems.append('the guest did not report its taint flags')
    for s in taint:
        m = re.match(r'FBE-TAINT (\d+)', s)
        value = int(m.group(1)) if m else -1
        if value & ~TAINT_ALLOWED:
            v.problems.append(f'the kernel is tainted: {value} '
                              f'({taint_names(value) if value > 0 else "?"})')
    if done and not any('FBE-DMESG-END' in s for s in lines):
        v.problems.append('the guest did not dump its dmesg')
    for s in dmesg:
        key = re.sub(r'^(<\d+>)?\[[ 0-9.]*\]\s*', '', s)
        if is_bad(s) and key not in seen_reports:
            seen_reports.add(key)
            v.problems.append(f'dmesg (not on the console): {s.strip()}')
    return v


def test_log(lines, name, tail=25):
    """The end of the log ftracetest printed (after its result) for a test."""
    out, grab = [], False
    for s in lines:
        r = ktap_result(s)
        if r:
            if grab:
                break
            grab = r[0] == name.strip()
            continue
        if grab and s.startswith('#'):
            out.append(s)
    return out[-tail:]


def cmdline_for(kcmdline):
    """The kernel command line of a check guest.  loglevel=5 puts
    KERN_WARNING on the console, so a WARNING or lockdep report shows up
    among the test results.  watchdog_thresh=60 (the most it takes):
    the soft lockup detector fires after 2 x 60 s instead of 2 x 10 s.
    Under TCG a CPU tracing every function with the function graph
    tracer went 26 s without scheduling its watchdog thread in a base
    ftracetest case ("ftrace - function graph filters"): emulation 50 to 100 times
    slower than the hardware the default is set for, not a lockup."""
    return ('console=ttyS0 panic=-1 oops=panic loglevel=5 '
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

    def __init__(self, tests, weights, ncpus):
        self.w = {t: weights.get(t, 10) for t in tests}
        # ftracetest runs a case with "# flags: instance" twice, the
        # second time in an instance: two results
        self.nres = {t: 1 + bool(re.search(r'^#.*flags:.*instance',
                                           read_test(t), re.M)) for t in tests}
        self.left = sorted(tests, key=lambda t: (-self.w[t], t))
        self.ncpus = max(1, ncpus)
        self.given = {}
        self.clients = clients_needed([os.path.join(FTRACE, 'test.d', t) for t in tests])
        self.lock = threading.Lock()

    def take(self, job):
        with self.lock:
            target = max(sum(self.w[t] for t in self.left) / (3 * self.ncpus),
                         self.MIN_CHUNK)
            chunk, load = [], 0
            while self.left and (not chunk or load + self.w[self.left[0]] <= target):
                chunk.append(self.left.pop(0))
                load += self.w[chunk[-1]]
            self.given.setdefault(job, []).extend(chunk)
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
        # ttyS1; naming the console's port too keeps it ttyS0
        extra_qemu = ['-chardev', f'socket,id=queue,path={sock}',
                      '-serial', 'mon:stdio', '-serial', 'chardev:queue']
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
        lines, status = boot(obj, initrd, cmdline, logpath, timeout, smp=smp,
                             mem=mem, on_line=on_line, quiet=True, stall=stall,
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
    cmdline = ('console=ttyS0 panic=-1 loglevel=5 ' +
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
        p.add_argument('--obj', default=os.path.join(BUILD, 'obj'))
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
    if not os.path.exists(os.path.join(args.obj, 'arch/x86/boot/bzImage')):
        sys.exit('error: no kernel built (make build)')
    sys.exit(cmd_check(args) if args.cmd == 'check' else cmd_run(args))


if __name__ == '__main__':
    main()
