#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The command line of one guest: boot the built kernel under QEMU with a
busybox initramfs.

  [ARCH=arm64] qemu.py check [--tests T ...] [--kcmdline ARGS] [--obj DIR] [--name NAME]
      One guest job (job.run_job()): ftracetest (KTAP) and the given boot
      and post scripts, then the guest's own health check (kmemleak scan,
      taint flags, the whole dmesg).  Prints every result as it arrives
      and a final "N passed, N failed, N skipped" line, and writes them
      to the result channel (results.py).  make check runs many of these
      side by side (scripts/check.py).
  qemu.py run [--kcmdline ARGS]
      With a terminal on stdin: a root shell.  Without one: the demo in
      guest/demo, its output, then power off.

In the spirit of tools/testing/kunit/kunit.py: the exact QEMU command is
printed, the whole console log is kept under build/logs/, and the
verdict is one.  The harness is split as kunit_tool is, each module
importing only those above it in this list:

  paths.py      where things are
  arch.py       one place per architecture: cross compiler, image, QEMU
                machine, CPU, console, the guest's user space
  results.py    the result channel: one JSON record per result
  verdict.py    KTAP and the kernel's reports in a console: the verdict
  initramfs.py  the guest's initramfs: user space, ftracetest, job files
  boot.py       booting a guest and reading its console
  testqueue.py  the ftracetest cases handed to the guests as they ask
  job.py        one guest job: initramfs, boot, results, verdict
  qemu.py, check.py, nolibc.py, bench.py, hitprofile.py: command lines

scripts/test/harness_test.py tests them without a kernel.
"""

import argparse
import os
import shlex
import subprocess
import sys

from harness import arch as arches
from harness import paths
from harness import results
from harness.boot import boot, kernel_image, kvm_usable, log, qemu_cmd, show_tail
from harness.initramfs import make_initramfs
from harness.job import run_job
from harness.verdict import bad_lines

def job_files(args):
    extra = [(os.path.abspath(b), '/fbe/boot/' + os.path.basename(b))
             for b in (args.boot_tests or [])]
    extra += [(os.path.abspath(b), '/fbe/post/' + os.path.basename(b))
              for b in (args.post_tests or [])]
    for e in args.extra or []:
        src, _, dst = e.partition(':')
        extra.append((os.path.abspath(src), dst or '/fbe/bin/' + os.path.basename(src)))
    return extra


def cmd_check(args):
    v, elapsed = run_job(args.arch, args.obj, args.name, args.tests or ['none'],
                         args.kcmdline, job_files(args), args.env or (),
                         args.timeout, args.smp, args.mem)
    results.record(f'guests/{args.name}', arch=args.arch.name, passed=v.npass,
                   failed=v.nfail, skipped=v.nskip, seconds=round(elapsed),
                   problems=v.problems or None)
    log(f'{v.npass} passed, {v.nfail} failed, {v.nskip} skipped')
    return 0 if v.ok else 1


def cmd_run(args):
    obj = args.obj
    os.makedirs(paths.LOGS, exist_ok=True)
    interactive = sys.stdin.isatty() and not args.demo
    initrd = os.path.join(paths.BUILD, 'initramfs-run.cpio.gz')
    demo = os.path.abspath(args.script or os.path.join(paths.TOP, 'guest/demo'))
    make_initramfs(args.arch, obj, 'shell' if interactive else 'run', [], initrd,
                   extra_files=[(demo, '/fbe/demo')])
    cmdline = (f'console={args.arch.console} panic=-1 loglevel=5 ' +
               args.kcmdline).strip()
    if interactive:
        accel = 'kvm' if kvm_usable(args.arch) else 'tcg'
        cmd = qemu_cmd(args.arch, obj, initrd, accel, cmdline, 2, 2048)
        log('$ ' + ' '.join(shlex.quote(c) for c in cmd))
        return subprocess.call(cmd)
    logpath = os.path.join(paths.LOGS, 'console-run.log')
    lines, status = boot(args.arch, obj, initrd, cmdline, logpath, args.timeout, echo=True)
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
    sub.choices['run'].add_argument('--demo', action='store_true',
                                    help='run the demo even on a terminal')
    sub.choices['run'].add_argument('--script',
                                    help='a guest script to run instead of guest/demo')
    args = ap.parse_args()
    args.arch = arches.get(args.arch)
    args.obj = args.obj or args.arch.obj(paths.BUILD)
    if not os.path.exists(kernel_image(args.arch, args.obj)):
        sys.exit('error: no kernel built (make build)')
    sys.exit(cmd_check(args) if args.cmd == 'check' else cmd_run(args))


if __name__ == '__main__':
    main()
