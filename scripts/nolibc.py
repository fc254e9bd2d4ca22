#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check-nolibc's guest: a kernel of an architecture Debian has no
user space of (scripts/arch.py's NOLIBC), booted with
guest/nolibc/fevent-test.c as its init (scripts/check-nolibc.sh builds
the kernel).  The init is built with the kernel's nolibc and the headers
of the kernel it runs on; the exact QEMU command is printed, the console
streamed, and KTAP and the kernel's reports judged by scripts/verdict.py
as make check's guests are.

  nolibc.py --arch ppc32 --obj build/obj-ppc32-btfy --btf y
"""

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import arch as arches
import initramfs
import qemu
import verdict

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE = os.path.join(TOP, 'build', 'linux')
SOURCE = os.path.join(TOP, 'guest', 'nolibc', 'fevent-test.c')


def build_init(a, obj):
    """The init program, static, on nolibc: its path."""
    hdr = os.path.join(obj, 'hdr')
    subprocess.run(['make', '-s', '-C', TREE, f'O={obj}', f'ARCH={a.karch}',
                    f'CROSS_COMPILE={a.cross}', 'headers_install',
                    f'INSTALL_HDR_PATH={hdr}'], check=True)
    nolibc = os.path.join(TREE, 'tools', 'include', 'nolibc')
    out = os.path.join(obj, 'fevent-test')
    subprocess.run([a.cc, '-Os', '-static', '-nostdlib', '-Wall',
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--arch', required=True, choices=list(arches.NOLIBC))
    ap.add_argument('--obj', required=True)
    ap.add_argument('--btf', choices=('y', 'n'), required=True)
    ap.add_argument('--timeout', type=int, default=600)
    args = ap.parse_args()
    a = arches.get_nolibc(args.arch)
    obj = os.path.realpath(args.obj)
    init = build_init(a, obj)
    initrd = os.path.join(obj, 'fevent-test-initrd.gz')
    make_initrd(obj, init, initrd)
    name = f'nolibc {a.name} btf={args.btf}'
    logdir = os.path.join(TOP, 'build', 'logs')
    os.makedirs(logdir, exist_ok=True)
    log = os.path.join(logdir, f'console-nolibc-{a.name}-btf{args.btf}.log')
    # make check's boot, on this architecture; it prints the QEMU command.
    # powerpc32 halts without QEMU exiting: the guest's last line ends it.
    qemu.ARCH = a
    lines, status = qemu.boot(obj, initrd,
                              f'console={a.console} panic=-1 fevent.btf={args.btf}',
                              log, args.timeout, smp=1, mem=512, echo=True,
                              stall=args.timeout,
                              finished=lambda s: 'FBE-DONE' in s)
    v = verdict.judge(lines, status, ftracetest=False)
    for p in v.problems:
        print(f'{name}: FAIL: {p}')
    print(f'{name}: {v.npass} passed, {v.nfail} failed, {v.nskip} skipped')
    return 0 if v.ok and v.npass else 1


if __name__ == '__main__':
    sys.exit(main())
