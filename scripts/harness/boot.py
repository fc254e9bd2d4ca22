#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Booting one guest: the QEMU command, the accelerator, the console.

boot() is the one place a console is read: it prints the exact QEMU
command, keeps the whole console under build/logs/, strips the escape
sequences and hands every line to its caller as it comes.  KVM is tried
first where the architecture and the host allow it, and TCG from then
on where a KVM guest does not come up (remembered in the cache).  The
architecture is an arch.Arch, passed to every function.
"""

import os
import select
import shlex
import subprocess
import time

from . import paths
from .verdict import clean

ACCEL_CACHE = os.path.join(paths.CACHE, 'accel')


def kernel_image(arch, obj):
    return os.path.join(obj, arch.image)


def log(msg):
    print(msg, flush=True)


def accel_key(arch):
    """What the KVM verdict depends on: QEMU's version and the host CPU."""
    try:
        ver = subprocess.run([arch.qemu, '--version'],
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


def kvm_usable(arch):
    if os.environ.get('FBE_ACCEL') in ('tcg', 'kvm'):
        return os.environ['FBE_ACCEL'] == 'kvm'
    if not arch.kvm or not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return False
    try:
        accel, _, key = open(ACCEL_CACHE).read().strip().partition(' ')
        if key == accel_key(arch):
            return accel == 'kvm'
    except OSError:
        pass
    return True


def remember_accel(arch, accel):
    if os.environ.get('FBE_ACCEL'):
        return
    os.makedirs(paths.CACHE, exist_ok=True)
    with open(ACCEL_CACHE, 'w') as f:
        f.write(f'{accel} {accel_key(arch)}\n')


def qemu_cmd(arch, obj, initrd, accel, cmdline, smp, mem):
    """The exact QEMU command of a guest."""
    return arch.qemu_cmd(kernel_image(arch, obj), initrd, accel, cmdline, smp, mem)


# Under KVM the kernel's first line comes within a second or two; on the
# hosts where KVM is broken, QEMU aborts at once or the guest never
# prints a kernel line.
KVM_FIRST_LINE = 10


def boot(arch, obj, initrd, cmdline, logpath, timeout, smp=2, mem=2048,
         echo=False, extra_qemu=(), stall=1200, on_line=None, quiet=False,
         finished=None, stop=None):
    """Boot and collect the console (escape sequences stripped).
    Returns (lines, status); on_line(line) is called for every line.
    finished(line), if given, says the guest is done: QEMU is stopped
    there (status 'done'), for a guest that halts without powering off.
    stop, a threading.Event, stops QEMU when it is set (status
    'stopped'): for a caller that works on the guest from another thread
    (hitprofile.py's gdb)."""
    accels = ['kvm', 'tcg'] if kvm_usable(arch) else ['tcg']
    for accel in accels:
        cmd = qemu_cmd(arch, obj, initrd, accel, cmdline, smp, mem) + list(extra_qemu)
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
                    if stop is not None and stop.is_set():
                        status = 'stopped'
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
            remember_accel(arch, 'tcg')
            continue
        if accel == 'kvm':
            remember_accel(arch, 'kvm')
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
