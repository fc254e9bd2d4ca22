#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check-nolibc: a kernel of each architecture Debian has no user
space of (scripts/harness/arch.py's NOLIBC), with and without BTF, configured
by scripts/harness/kconfig.py (config/kconfig/ARCH.config on tinyconfig), built, and
booted with guest/nolibc/fevent-test.c as its init.  The init is built
with the kernel's nolibc and the headers of the kernel it runs on; the
exact QEMU command is printed, the console streamed, and KTAP and the
kernel's reports judged by scripts/harness/verdict.py as make check's guests
are.

  [NOLIBC_ARCHES="ppc32"] [BTF="y n"] nolibc.py [--arches ppc32 riscv64] [--btf n y]

Each kernel is one record on the result channel (scripts/harness/results.py).
"""

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

from harness import arch as arches
from harness import initramfs
from harness import kconfig
from harness import results
from harness import verdict
from harness.boot import boot
from harness.paths import BUILD, CACHE, LOGS, TOP, TREE

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


BTF = ['CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y', 'CONFIG_DEBUG_INFO_BTF=y',
       'CONFIG_DEBUG_INFO_BTF_MODULES=y', 'CONFIG_BPF_SYSCALL=y',
       'CONFIG_PROBE_EVENTS_BTF_ARGS=y']


def build_kernel(a, obj, btf):
    """Configure (scripts/harness/kconfig.py) and build a's kernel in obj, its
    fragment with BTF if btf: [problems]."""
    frag = os.path.join(obj, 'fragment.config')
    os.makedirs(obj, exist_ok=True)
    with open(a.config) as f, open(frag, 'w') as out:
        out.write(f.read() + ''.join(line + '\n' for line in (BTF if btf == 'y' else [])))
    cc = f'ccache {a.cross}gcc'
    try:
        lost = kconfig.configure(a.karch, obj, [frag], a.cross, cc)
    except subprocess.CalledProcessError as e:
        return [f'config failed: {e}']
    if lost:
        return ['options that did not survive olddefconfig: ' + '; '.join(lost)]
    log = os.path.join(LOGS, f'nolibc-{a.name}-btf{btf}-build.log')
    with open(log, 'w') as f:
        rc = subprocess.run(['make', '-s', '-C', TREE, f'O={obj}', f'ARCH={a.karch}',
                             f'CROSS_COMPILE={a.cross}', f'CC={cc}', 'LOCALVERSION=',
                             f'-j{os.environ.get("JOBS") or os.cpu_count()}',
                             a.target, 'modules'], stdout=f,
                            stderr=subprocess.STDOUT).returncode
    if rc:
        with open(log) as f:
            print(''.join(f.readlines()[-20:]), file=sys.stderr)
        return [f'build failed (log: {os.path.relpath(log, TOP)})']
    return []


def run(a, btf, timeout):
    """Build, boot and judge a's kernel: its result is recorded."""
    name = f'nolibc {a.name} btf={btf}'
    obj = os.path.join(BUILD, f'obj-{a.name}-btf{btf}')
    t0 = time.time()
    problems = build_kernel(a, obj, btf)
    if problems:
        for p in problems:
            print(f'{name}: FAIL: {p}')
        results.record(f'nolibc/{a.name}-btf{btf}', arch=a.name, failed=1,
                       seconds=round(time.time() - t0), problems=problems)
        return False
    print(f'{name}: built in {time.time() - t0:.0f} s', flush=True)
    init = build_init(a, obj)
    initrd = os.path.join(obj, 'fevent-test-initrd.gz')
    make_initrd(obj, init, initrd)
    log = os.path.join(LOGS, f'console-nolibc-{a.name}-btf{btf}.log')
    # make check's boot, on this architecture; it prints the QEMU command.
    # powerpc32 halts without QEMU exiting: the guest's last line ends it.
    t0 = time.time()
    lines, status = boot(a, obj, initrd,
                         f'console={a.console} panic=-1 fevent.btf={btf}',
                         log, timeout, smp=1, mem=512, echo=True,
                         stall=timeout,
                         finished=lambda s: 'FBE-DONE' in s)
    v = verdict.judge(lines, status, ftracetest=False)
    for p in v.problems:
        print(f'{name}: FAIL: {p}')
    print(f'{name}: {v.npass} passed, {v.nfail} failed, {v.nskip} skipped')
    # a guest that passed nothing did not pass
    problems = v.problems + ([] if v.npass else ['no test passed'])
    results.record(f'nolibc/{a.name}-btf{btf}', arch=a.name, passed=v.npass,
                   failed=v.nfail + (not v.nfail and bool(problems)), skipped=v.nskip,
                   seconds=round(time.time() - t0), problems=problems or None)
    return v.ok and v.npass > 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--arches', nargs='+', choices=list(arches.NOLIBC),
                    default=os.environ.get('NOLIBC_ARCHES', 'ppc32 riscv64').split())
    ap.add_argument('--btf', nargs='+', choices=('y', 'n'),
                    default=os.environ.get('BTF', 'n y').split())
    ap.add_argument('--timeout', type=int, default=600)
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(TREE, '.git')):
        sys.exit('error: no build/linux (make tree)')
    os.makedirs(LOGS, exist_ok=True)
    os.environ.setdefault('CCACHE_DIR', os.path.join(CACHE, 'ccache'))
    os.environ.update(CCACHE_BASEDIR=TOP, CCACHE_NOHASHDIR='1')
    ok = True
    for name in args.arches:
        a = arches.get_nolibc(name)
        subprocess.run([os.path.join(TOP, 'scripts/deps.sh'), *a.host_pkgs], check=True)
        for btf in args.btf:
            ok &= run(a, btf, args.timeout)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
