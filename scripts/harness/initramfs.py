#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The guest's initramfs: its user space, ftracetest and a job's files.

make_base_initramfs() builds what every job of a kernel shares (busybox,
dash as /bin/sh, init, ftracetest, the modules); make_initramfs() adds a
job's own files and, for the tests that need them, the host's perf and
trace-cmd.  The user space comes from the architecture (scripts/harness/arch.py):
the host's own programs on x86_64, the unpacked Debian packages of
another architecture (make deps ARCH=...).
"""

import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

from . import paths

TOP, BUILD = paths.TOP, paths.BUILD
FTRACE = os.path.join(paths.TREE, 'tools/testing/selftests/ftrace')

def busybox_path():
    """The host's static busybox."""
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


def make_base_initramfs(arch, obj, out):
    """busybox, dash, init, ftracetest and the modules: what every job
    shares.  A job's own files go into a second archive appended to it
    (the kernel unpacks concatenated archives in order)."""
    stage = tempfile.mkdtemp(prefix='fbe-initramfs-')
    try:
        for d in ('bin', 'sbin', 'usr/bin', 'usr/sbin', 'proc', 'sys', 'dev',
                  'tmp', 'etc', 'fbe', 'root', 'lib/modules'):
            os.makedirs(os.path.join(stage, d), exist_ok=True)
        arc = arch
        host_bb = busybox_path()
        bb = arc.user_file('bin/busybox') if arc.userland else host_bb
        shutil.copy2(bb, os.path.join(stage, 'bin/busybox'))
        # The host's busybox lists the applets: another architecture's
        # is the same Debian version of the same package (make deps
        # unpacks the version apt has), and cannot run here.
        applets = subprocess.run([host_bb, '--list-full'], capture_output=True,
                                 text=True, check=True).stdout.split()
        # /bin/sh is Debian's dash, as where ftracetest is usually run:
        # busybox ash runs applets by re-executing /proc/self/exe, so
        # sched_process_exec would never see "ping" (the inter-event
        # dynamic string tests), and add_remove_uprobe.tc probes the
        # shell's text mapping, which must show up as .../bin/sh.
        host_progs = {'bin/sh': shutil.which('dash') or bb} if not arc.userland else {}
        for a in applets:
            dst = os.path.join(stage, a)
            if not os.path.exists(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                os.symlink('/bin/busybox', dst)
        # Programs ftracetest needs that busybox lacks: chrt (wakeup
        # tracer tests) and nice (inter-event trigger tests), with their
        # shared libraries.
        # On an architecture whose user space is unpacked packages, they
        # come from its util-linux and coreutils (arch.py).
        for prog in ('chrt', 'nice'):
            if shutil.which(prog) and not arc.userland:
                host_progs['usr/bin/' + prog] = shutil.which(prog)
        for dst, path in host_progs.items():
            if os.path.lexists(os.path.join(stage, dst)):
                os.remove(os.path.join(stage, dst))
            copy_with_libs(stage, path, dst)
        for _, files in arc.userland:
            for p in files:
                if p == 'bin/busybox':
                    continue
                dst = 'bin/sh' if p == 'bin/dash' else p
                if os.path.lexists(os.path.join(stage, dst)):
                    os.remove(os.path.join(stage, dst))
                os.makedirs(os.path.dirname(os.path.join(stage, dst)), exist_ok=True)
                shutil.copy2(arc.user_file(p), os.path.join(stage, dst))
        shutil.copy2(os.path.join(TOP, 'guest/init'), os.path.join(stage, 'init'))
        # Where the guest asks the host for tests (testqueue.TestQueue)
        with open(os.path.join(stage, 'fbe/queue-tty'), 'w') as f:
            f.write(arc.queue_tty + '\n')
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


def make_initramfs(arch, obj, mode, tests, out, extra_files=(), base=None,
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
        make_base_initramfs(arch, obj, base)
    parts = [base, job]
    td = os.path.join(FTRACE, 'test.d')
    # The host's clients run only on the host's architecture; elsewhere
    # the tests that need them say UNSUPPORTED (require_program).
    if arch.userland:
        pass
    elif clients or clients_needed([t if os.path.exists(t) else os.path.join(td, t)
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
