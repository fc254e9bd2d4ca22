#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check-abi32's guest: one 32-bit powerpc kernel booted with
guest/abi32/abi32-test.c as its init (scripts/check-abi32.sh builds the
kernel).  The init is built with the kernel's nolibc and the headers of
the kernel it runs on; its console is streamed, KTAP and the kernel's
reports judged by scripts/verdict.py as make check's guests are.

  abi32.py --obj build/obj-ppc32-btfy --btf y
"""

import argparse
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import initramfs
import verdict

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE = os.path.join(TOP, 'build', 'linux')
CROSS = 'powerpc-linux-gnu-'
SOURCE = os.path.join(TOP, 'guest', 'abi32', 'abi32-test.c')


def build_init(obj):
    """The init program, static, on nolibc: its path."""
    hdr = os.path.join(obj, 'hdr')
    subprocess.run(['make', '-s', '-C', TREE, f'O={obj}', 'ARCH=powerpc',
                    f'CROSS_COMPILE={CROSS}', 'headers_install',
                    f'INSTALL_HDR_PATH={hdr}'], check=True)
    nolibc = os.path.join(TREE, 'tools', 'include', 'nolibc')
    out = os.path.join(obj, 'abi32-init')
    subprocess.run([CROSS + 'gcc', '-Os', '-static', '-nostdlib', '-Wall',
                    '-Werror', '-fno-stack-protector',
                    '-fno-asynchronous-unwind-tables',
                    '-include', os.path.join(nolibc, 'nolibc.h'),
                    '-I', nolibc, '-I', os.path.join(hdr, 'include'),
                    '-o', out, SOURCE, '-lgcc'], check=True)
    return out


def make_initrd(obj, init, out):
    module = os.path.join(obj, 'samples', 'trace_events', 'fevent-sample.ko')
    if not os.path.exists(module):
        sys.exit(f'error: no {module}: CONFIG_SAMPLE_FUNCTION_EVENTS=m')
    with tempfile.TemporaryDirectory() as stage:
        shutil.copy(init, os.path.join(stage, 'init'))
        shutil.copy(module, stage)
        os.mkdir(os.path.join(stage, 'dev'))
        for name, major, minor in (('console', 5, 1), ('zero', 1, 5)):
            os.mknod(os.path.join(stage, 'dev', name),
                     stat.S_IFCHR | 0o600, os.makedev(major, minor))
        initramfs.write_cpio_gz(stage, out)


def qemu_cmd(obj, initrd, btf):
    return ['qemu-system-ppc', '-machine', 'ppce500', '-cpu', 'e500mc',
            '-m', '512', '-smp', '1', '-accel', 'tcg',
            '-kernel', os.path.join(obj, 'vmlinux'), '-initrd', initrd,
            '-append', f'console=ttyS0 panic=-1 abi32.btf={btf}',
            '-nographic', '-no-reboot', '-nic', 'none']


def boot(cmd, logpath, timeout):
    """Run the guest, its console streamed to stdout and logpath, until
    it prints FBE-DONE and its dmesg (or times out): its lines and how
    it ended."""
    lines, status = [], 'timeout'
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + timeout

    def on_alarm(*_):
        os.killpg(proc.pid, signal.SIGKILL)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(timeout)
    with open(logpath, 'w') as log:
        for raw in proc.stdout:
            s = raw.decode(errors='replace').rstrip('\r\n')
            lines.append(s)
            log.write(s + '\n')
            print(s, flush=True)
            if 'FBE-DONE' in s:
                status = 'done'
            if status == 'done' and 'FBE-DMESG-END' in ''.join(lines[-3:]):
                break
    signal.alarm(0)
    # the guest powers off; a kernel that cannot is stopped here
    try:
        proc.wait(timeout=max(1, min(10, deadline - time.monotonic())))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return lines, status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--obj', required=True)
    ap.add_argument('--btf', choices=('y', 'n'), required=True)
    ap.add_argument('--timeout', type=int, default=600)
    args = ap.parse_args()
    obj = os.path.realpath(args.obj)
    init = build_init(obj)
    initrd = os.path.join(obj, 'abi32-initrd.gz')
    make_initrd(obj, init, initrd)
    cmd = qemu_cmd(obj, initrd, args.btf)
    print('abi32: ' + shlex.join(cmd), flush=True)
    logdir = os.path.join(TOP, 'build', 'logs')
    os.makedirs(logdir, exist_ok=True)
    lines, status = boot(cmd, os.path.join(logdir, f'abi32-btf{args.btf}.log'),
                         args.timeout)
    v = verdict.judge(lines, status, ftracetest=False)
    for p in v.problems:
        print(f'abi32 btf={args.btf}: FAIL: {p}')
    print(f'abi32 btf={args.btf}: {v.npass} passed, {v.nfail} failed')
    return 0 if v.ok and v.npass else 1


if __name__ == '__main__':
    sys.exit(main())
