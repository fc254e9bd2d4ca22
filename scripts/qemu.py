#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Boot the built kernel under QEMU with a busybox initramfs.

  qemu.py check [--tests T ...] [--kcmdline ARGS] [--obj DIR] [--name NAME]
      Run ftracetest (KTAP) in the guest, print every test with its result
      and a final "N passed, N failed, N skipped" line.  (make check
      leaves out the tests in config/known-failures and reports them as
      skipped.)
  qemu.py run [--kcmdline ARGS]
      With a terminal on stdin: a root shell.  Without one: the demo in
      guest/demo, its output, then power off.

In the spirit of tools/testing/kunit/kunit.py: the exact QEMU command is
printed, the whole console log is kept under build/logs/, and a panic,
oops, BUG, WARNING, KASAN/UBSAN/lockdep report or a hung guest is a
failure whose log tail is shown.
"""

import argparse
import gzip
import os
import re
import select
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, 'build')
TREE = os.path.join(BUILD, 'linux')
LOGS = os.path.join(BUILD, 'logs')
FTRACE = os.path.join(TREE, 'tools/testing/selftests/ftrace')
ACCEL_CACHE = os.path.join(BUILD, '.accel')

# What in a console log means the kernel is not healthy.
BAD = re.compile(r'(Kernel panic|BUG:|Oops|WARNING:|general protection fault|'
                 r'UBSAN:|KASAN:|possible recursive locking|'
                 r'possible circular locking|inconsistent lock state|'
                 r'suspicious RCU usage|rcu_sched self-detected stall|'
                 r'rcu: INFO: |unreferenced object|'
                 r'kernel BUG at)')
KTAP_RESULT = re.compile(r'^(ok|not ok) (\d+) (.*?)(?:\s+# (.*))?$')


def log(msg):
    print(msg, flush=True)


def busybox_path():
    for p in ('/bin/busybox', '/usr/bin/busybox'):
        if os.path.exists(p):
            out = subprocess.run(['file', '-L', p], capture_output=True,
                                 text=True).stdout if shutil.which('file') else ''
            if 'dynamically' in out:
                continue
            return p
    sys.exit('error: busybox-static is not installed (make deps)')


def make_initramfs(obj, mode, tests, out, extra_files=()):
    """Build a gzip'd newc cpio; return the guest test arguments."""
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
            dst = os.path.join(stage, dst)
            if os.path.lexists(dst):
                os.remove(dst)
            shutil.copy2(path, dst)
            ldd = subprocess.run(['ldd', path], capture_output=True,
                                 text=True).stdout
            for lib in re.findall(r'(/\S+) \(0x', ldd):
                dst = os.path.join(stage, lib.lstrip('/'))
                if not os.path.exists(dst):
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copy2(os.path.realpath(lib), dst)
        shutil.copy2(os.path.join(TOP, 'guest/init'), os.path.join(stage, 'init'))
        # test_ownership.tc needs a user and a group other than root
        with open(os.path.join(stage, 'etc/passwd'), 'w') as f:
            f.write('root:x:0:0:root:/root:/bin/sh\n'
                    'tracer:x:1000:1000:tracer:/:/bin/sh\n')
        with open(os.path.join(stage, 'etc/group'), 'w') as f:
            f.write('root:x:0:\ntracing:x:1000:\n')
        with open(os.path.join(stage, 'fbe/mode'), 'w') as f:
            f.write(mode + '\n')
        for src, dst in extra_files:
            d = os.path.join(stage, dst.lstrip('/'))
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copy2(src, d)
        # ftracetest and its test.d, as in the tree.
        shutil.copytree(FTRACE, os.path.join(stage, 'ftrace'), symlinks=True)
        guest_tests = []
        td = os.path.join(FTRACE, 'test.d')
        for t in tests:
            if t == 'none':
                continue
            p = os.path.abspath(t)
            for base in (td, os.path.join(FTRACE)):
                if p.startswith(base + '/') or p == base:
                    break
            else:
                if not os.path.exists(p):
                    # relative to test.d?
                    alt = os.path.join(td, t)
                    if os.path.exists(alt):
                        p = alt
                    else:
                        sys.exit(f'error: no such test: {t}')
            if p == td or p.startswith(td + '/'):
                guest_tests.append('/ftrace/test.d' + p[len(td):])
                continue
            # Outside the tree: copy into test.d/ext/ so that the helpers
            # in test.d/functions apply.
            dst = os.path.join(stage, 'ftrace/test.d/ext', os.path.basename(p))
            if os.path.isdir(p):
                shutil.copytree(p, dst)
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(p, dst)
            guest_tests.append('/ftrace/test.d/ext/' + os.path.basename(p))
        with open(os.path.join(stage, 'fbe/tests'), 'w') as f:
            f.write((' '.join(guest_tests) if tests != ['none'] else 'none') + '\n')
        mods = os.path.join(obj, 'modinst/lib/modules')
        if os.path.isdir(mods):
            shutil.copytree(mods, os.path.join(stage, 'lib/modules'),
                            dirs_exist_ok=True, symlinks=True)
        files = subprocess.run(['find', '.', '-mindepth', '1'], cwd=stage,
                               capture_output=True, text=True,
                               check=True).stdout
        cpio = subprocess.run(['cpio', '-o', '-H', 'newc', '--quiet',
                               '--owner=0:0'], cwd=stage, input=files.encode(),
                              capture_output=True, check=True).stdout
        with gzip.open(out, 'wb', compresslevel=1) as f:
            f.write(cpio)
        return guest_tests
    finally:
        shutil.rmtree(stage)


def kvm_usable():
    if os.environ.get('FBE_ACCEL') in ('tcg', 'kvm'):
        return os.environ['FBE_ACCEL'] == 'kvm'
    if not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return False
    try:
        return open(ACCEL_CACHE).read().strip() != 'tcg'
    except OSError:
        return True


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


def boot(obj, initrd, cmdline, logpath, timeout, smp=2, mem=2048,
         echo=False, extra_qemu=(), stall=1200):
    """Boot and collect the console. Returns (lines, status)."""
    accels = ['kvm', 'tcg'] if kvm_usable() else ['tcg']
    for accel in accels:
        cmd = qemu_cmd(obj, initrd, accel, cmdline, smp, mem) + list(extra_qemu)
        log('$ ' + ' '.join(shlex.quote(c) for c in cmd))
        start = time.time()
        lines, status = [], 'timeout'
        with open(logpath, 'w') as logf:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT)
            buf = b''
            seen_init = False
            last = time.time()
            try:
                while True:
                    elapsed = time.time() - start
                    if elapsed > timeout:
                        break
                    # ftracetest prints nothing while a test runs: a guest
                    # silent for this long is hung in one.
                    if time.time() - last > stall:
                        status = f'no output for {stall}s'
                        break
                    # A guest that does not reach init quickly under KVM is
                    # the nested-KVM hang seen here: fall back to TCG.
                    if accel == 'kvm' and not seen_init and elapsed > 30:
                        status = 'kvm-hang'
                        break
                    r, _, _ = select.select([p.stdout], [], [], 1.0)
                    if not r:
                        if p.poll() is not None:
                            status = 'exited'
                            break
                        continue
                    chunk = os.read(p.stdout.fileno(), 65536)
                    if not chunk:
                        status = 'exited'
                        break
                    buf += chunk
                    last = time.time()
                    *done, buf = buf.split(b'\n')
                    for raw in done:
                        s = raw.decode('utf-8', 'replace').rstrip('\r')
                        logf.write(s + '\n')
                        lines.append(s)
                        if echo:
                            print(s, flush=True)
                        if s.startswith('FBE-INIT'):
                            seen_init = True
                    logf.flush()
            finally:
                if p.poll() is None:
                    p.kill()
                p.wait()
            if buf:
                lines.append(buf.decode('utf-8', 'replace'))
                logf.write(lines[-1] + '\n')
        if accel == 'kvm' and not seen_init:
            log(f'KVM guest did not reach init ({status}): falling back to TCG')
            with open(ACCEL_CACHE, 'w') as f:
                f.write('tcg\n')
            continue
        log(f'guest ran {time.time() - start:.0f}s under {accel}')
        return lines, status
    return [], 'no-accel'


def bad_lines(lines):
    return [i for i, s in enumerate(lines) if BAD.search(s)]


def show_tail(lines, idx=None, n=40):
    if idx is None:
        seg = lines[-n:]
    else:
        seg = lines[max(0, idx - 5):idx + n]
    for s in seg:
        log('  | ' + s)


def parse_ktap(lines):
    """Return [(name, result, comment)] from ftracetest's KTAP output."""
    results = []
    for s in lines:
        m = KTAP_RESULT.match(s.strip())
        if not m:
            continue
        ok, _, name, comment = m.groups()
        comment = (comment or '').strip()
        if ok == 'ok':
            if comment.startswith('SKIP'):
                res = 'SKIP'
            elif comment.startswith('XFAIL'):
                res = 'XFAIL'
            else:
                res = 'PASS'
        else:
            res = 'FAIL'
            if comment:
                res = comment.split()[0].upper()  # UNRESOLVED, ERROR
        results.append((name.strip(), res, comment))
    return results


def test_log(lines, name, tail=25):
    """The end of the log ftracetest printed (after its result) for a test."""
    out, grab = [], False
    for s in lines:
        m = KTAP_RESULT.match(s.strip())
        if m:
            if grab:
                break
            grab = m.group(3).strip() == name.strip()
            continue
        if grab and s.startswith('#'):
            out.append(s)
    return out[-tail:]


def cmd_check(args):
    obj = args.obj
    os.makedirs(LOGS, exist_ok=True)
    initrd = os.path.join(BUILD, f'initramfs-{args.name}.cpio.gz')
    tests = args.tests or []
    extra = [(os.path.abspath(b), '/fbe/boot/' + os.path.basename(b))
             for b in (args.boot_tests or [])]
    extra += [(os.path.abspath(b), '/fbe/post/' + os.path.basename(b))
              for b in (args.post_tests or [])]
    for e in args.extra or []:
        src, _, dst = e.partition(':')
        extra.append((os.path.abspath(src), dst or '/fbe/bin/' + os.path.basename(src)))
    envfile = None
    if args.env:
        fd, envfile = tempfile.mkstemp(prefix='fbe-env-')
        with os.fdopen(fd, 'w') as f:
            for e in args.env:
                k, _, v = e.partition('=')
                f.write(f'{k}={shlex.quote(v)}\n')
        extra.append((envfile, '/fbe/env'))
    try:
        guest_tests = make_initramfs(obj, 'check', tests, initrd, extra)
    finally:
        if envfile:
            os.unlink(envfile)
    cmdline = ('console=ttyS0 panic=-1 oops=panic loglevel=4 '
               'ftrace_dump_on_oops ' + args.kcmdline).strip()
    logpath = os.path.join(LOGS, f'console-{args.name}.log')
    start = time.time()
    lines, status = boot(obj, initrd, cmdline, logpath, args.timeout,
                         smp=args.smp, mem=args.mem, echo=args.verbose)
    elapsed = time.time() - start
    with open(os.path.join(LOGS, 'times'), 'a') as f:
        f.write(f'guest-{args.name} {elapsed:.0f}\n')
    results = parse_ktap(lines)
    npass = nfail = nskip = 0
    failed = []
    what = (f'{len(guest_tests)} test files' if guest_tests else
            'boot tests only' if tests == ['none'] else 'all of test.d')
    log(f'--- ftracetest ({args.name}): {len(results)} results from {what}')
    for name, res, comment in results:
        if res in ('PASS', 'XFAIL'):
            npass += 1
        elif res == 'SKIP':
            nskip += 1
        else:
            nfail += 1
            failed.append(name)
        log(f'[{res:>10}] {name}' + (f'  # {comment}' if comment else ''))
    ok = True
    done = [s for s in lines if s.startswith('FBE-DONE')]
    if not done:
        ok = False
        log(f'error: the guest did not finish ({status}) after {len(results)} '
            f'results; console log: {logpath}')
        show_tail(lines)
    plan = sum(int(m.group(1)) for m in
               (re.match(r'^1\.\.(\d+)$', s.strip()) for s in lines) if m)
    if plan != len(results):
        ok = False
        log(f'error: KTAP plans announce {plan} tests, {len(results)} reported')
    bad = bad_lines(lines)
    if bad:
        ok = False
        log(f'error: the kernel reported a problem (console log: {logpath}):')
        show_tail(lines, bad[0])
    for name in failed:
        log(f'--- log of failed test: {name}')
        for s in test_log(lines, name):
            log('  | ' + s)
    if not ok:
        nfail += 1
    log(f'guest time {elapsed:.0f}s; console log: {os.path.relpath(logpath, TOP)}')
    summary = f'{npass} passed, {nfail} failed, {nskip} skipped'
    if args.summary:
        with open(args.summary, 'a') as f:
            f.write(f'{npass} {nfail} {nskip}\n')
    log(summary)
    return 0 if nfail == 0 else 1


def cmd_run(args):
    obj = args.obj
    os.makedirs(LOGS, exist_ok=True)
    interactive = sys.stdin.isatty() and not args.demo
    initrd = os.path.join(BUILD, 'initramfs-run.cpio.gz')
    demo = os.path.abspath(args.script or os.path.join(TOP, 'guest/demo'))
    make_initramfs(obj, 'shell' if interactive else 'run', [], initrd,
                   extra_files=[(demo, '/fbe/demo')])
    cmdline = ('console=ttyS0 panic=-1 loglevel=4 ' + args.kcmdline).strip()
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
    if not any(s.startswith('FBE-DONE rc=0') for s in lines):
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
