#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One guest job: its initramfs, its boot, its results as they come, its
verdict.

run_job() packs the job's files onto the kernel's base initramfs, boots
it through boot.boot(), prints each KTAP result as it arrives (with the
cases of a TestQueue served to the guest as it asks) and judges the
whole console with verdict.judge().
"""

import os
import shlex
import socket
import shutil
import tempfile
import threading
import time

from . import paths
from .boot import boot, kvm_usable, log, qemu_cmd, show_tail
from .initramfs import make_initramfs
from .testqueue import serve_queue
from .verdict import bad_lines, is_bad, judge, ktap_result, test_log


def cmdline_for(arch, kcmdline):
    """The kernel command line of a check guest.  loglevel=5 puts
    KERN_WARNING on the console, so a WARNING or lockdep report shows up
    among the test results.  watchdog_thresh=60 (the most it takes):
    the soft lockup detector fires after 2 x 60 s instead of 2 x 10 s.
    Under TCG a CPU tracing every function with the function graph
    tracer went 26 s without scheduling its watchdog thread in a base
    ftracetest case ("ftrace - function graph filters"): emulation 50 to 100 times
    slower than the hardware the default is set for, not a lockup.
    rcupdate.rcu_cpu_stall_timeout=120 gives RCU's stall warning the
    same 120 s (the kernel's is 60 s, CONFIG_RCU_CPU_STALL_TIMEOUT in
    debug.config): ftrace/fgraph-multi.tc, which has that description
    too, traces every lock, RCU and sched function of the lockdep
    kernel, then every function, with the graph tracer (477 s under
    TCG), and CI's slower machine once saw an RCU stall there that no
    soft lockup went with.  sysctl.kernel.hung_task_timeout_secs=600
    (120 s by default): 00basic/basic2.tc turns the function tracer on
    for every function, and ftrace rewrites their call sites under
    text_mutex; a slower machine's TCG took over 120 s, and a worker
    flipping a static key then (sched_clock_work, after the clocksource
    watchdog found the emulated TSC unstable) waited for that mutex
    long enough to be reported as a hung task."""
    return (f'console={arch.console} panic=-1 oops=panic loglevel=5 '
            'ftrace_dump_on_oops watchdog_thresh=60 '
            'rcupdate.rcu_cpu_stall_timeout=120 '
            'sysctl.kernel.hung_task_timeout_secs=600 ' + kcmdline).strip()


def report(name, lines, v, logpath):
    """The verdict of one job, for a person: failures with their logs."""
    for test, res, comment in v.results:
        if res not in ('PASS', 'XFAIL', 'SKIP'):
            log(f'--- {name}: {test}: {res}' + (f'  # {comment}' if comment else ''))
            for s in test_log(lines, test):
                log('  | ' + s)
    for s in v.known:
        log(f'--- {name}: known report (config/lists/known-reports): {s}')
    for p in v.problems:
        log(f'--- {name}: error: {p}')
    if v.problems:
        bad = bad_lines([s for s in lines])
        show_tail(lines, bad[0] if bad else None)
        log(f'    console log: {os.path.relpath(logpath, paths.TOP)}')


def run_job(arch, obj, name, tests, kcmdline='', extra=(), env=(), timeout=1800,
            smp=2, mem=2048, base=None, prefix=None,
            stall=1200, queue=None):
    """Build the job's initramfs, boot it, stream its results, judge it.
    With a TestQueue instead of tests, the guest takes its tests from
    the queue as it goes (serve_queue()).  Returns (verdict, seconds)."""
    os.makedirs(paths.LOGS, exist_ok=True)
    initrd = os.path.join(paths.BUILD, f'initramfs-{name}-{os.getpid()}.cpio.gz')
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
        make_initramfs(arch, obj, 'check', tests, initrd, extra, base=base,
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
        extra_qemu = arch.queue_args(sock)
        threading.Thread(target=serve_queue, daemon=True,
                         args=(srv, queue, name,
                               lambda m: log(f'{prefix()} {m}'))).start()
    logpath = os.path.join(paths.LOGS, f'console-{name}.log')
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

    cmdline = cmdline_for(arch, kcmdline)
    accel = 'kvm' if kvm_usable(arch) else 'tcg'
    log(f'{prefix()} $ ' + ' '.join(shlex.quote(c) for c in
                                     qemu_cmd(arch, obj, initrd, accel, cmdline, smp, mem) +
                                     extra_qemu))
    try:
        limit = stall if queue is None else (lambda: queue.stall(name, stall))
        lines, status = boot(arch, obj, initrd, cmdline, logpath, timeout, smp=smp,
                             mem=mem, on_line=on_line, quiet=True, stall=limit,
                             extra_qemu=extra_qemu)
    finally:
        if srv:
            srv.close()
            shutil.rmtree(sockdir)
    elapsed = time.time() - start
    os.unlink(initrd)
    # What each result took, for config/lists/test-weights
    with open(os.path.join(paths.LOGS, f'test-times-{name}'), 'w') as f:
        for test, secs in times:
            f.write(f'{secs:7.1f} {test}\n')
    if queue is not None:
        v = judge(lines, status, handed=queue.results(name))
    else:
        v = judge(lines, status, ftracetest=bool(tests) and list(tests) != ['none'])
    report(name, lines, v, logpath)
    return v, elapsed
