#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The harness's own test: no kernel, a few seconds.

Each module of the harness is tested here without a kernel:
  verdict.py    canned guest consoles, one per way a run can go wrong:
                each must give a failing verdict naming the cause (and
                a clean console must pass, so that the check can fail)
  testqueue.py  the test queue and its socket
  results.py    the result channel: records added up, budgets
  arch.py       each architecture's QEMU command, console and queue
  initramfs.py  each architecture's archive: its busybox, /bin/sh and
                queue device, read back out of the cpio
Part of make check; prints KTAP and "N passed, N failed", and with
--record writes them to the result channel (results.py).
"""

import gzip
import os
import shutil
import socket
import struct
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import arch  # noqa: E402
from harness import initramfs  # noqa: E402
from harness import testqueue  # noqa: E402
from harness import verdict  # noqa: E402
from harness import results  # noqa: E402

ESC = '\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01H'
INIT = [ESC + 'SeaBIOS (version 1.16.2-debian-1.16.2-1)',
        'Booting from ROM...',
        '[    0.000000] Linux version 6.12.57 (fbe@fbe)',
        ESC + 'FBE-INIT 6.12.57 cpus=2']
TESTS = ['TAP version 13', '1..3',
         'ok 1 Basic trace file check',
         'ok 2 Function event - add and remove',
         'ok 3 Function event - unsupported thing # SKIP',
         '# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0']
LEAKS = ['1..1', 'ok 1 kmemleak: no suspected leaks']
END = ['FBE-TAINT 0', 'FBE-DMESG-BEGIN',
       '[    0.000000] Linux version 6.12.57 (fbe@fbe)',
       '[    1.000000] Run /init as init process',
       'FBE-DMESG-END', 'FBE-DONE rc=0']
CLEAN = INIT + TESTS + LEAKS + END


def replace(lines, old, new):
    i = lines.index(old)
    return lines[:i] + new + lines[i + 1:]


LOCKDEP = ['[   12.000000] ------------[ cut here ]------------',
           '[   12.000001] WARNING: CPU: 0 PID: 88 at kernel/trace/trace_probe.c:183 '
           'trace_probe_log_init+0x5e/0x70']
KASAN = ['[   13.000000] ==================================================================',
         '[   13.000001] BUG: KASAN: slab-out-of-bounds in fetch_store_string+0x1a/0x90']

# (name, console, status, what the verdict must name)
# A WARN() of the base that config/lists/known-reports lists (kprobes, out of memory)
DISARM = ('[   30.0] WARNING: CPU: 1 PID: 1738 at ../linux/kernel/kprobes.c:1130 '
          'disarm_kprobe_ftrace+0xfd/0x10a')
CASES = [
    ('a failing test', replace(CLEAN, 'ok 2 Function event - add and remove',
                               ['not ok 2 Function event - add and remove']),
     '', 'Function event - add and remove'),
    ('an unresolved test', replace(CLEAN, 'ok 2 Function event - add and remove',
                                   ['not ok 2 Function event - add and remove # UNRESOLVED']),
     '', 'UNRESOLVED'),
    ('"not ok" with a SKIP directive', replace(CLEAN, 'ok 1 kmemleak: no suspected leaks',
                                               ['not ok 1 stress # SKIP not loaded']),
     '', 'stress'),
    ('a guest that crashed mid-test',
     INIT + TESTS[:3] + ['[   20.000000] BUG: kernel NULL pointer dereference, address: 0',
                         '[   20.100000] Kernel panic - not syncing: Fatal exception'],
     'qemu exited (0)', 'did not finish'),
    ('a guest that hung mid-test', INIT + TESTS[:3], 'no output for 900s', 'no output'),
    ('a missing ftracetest summary',
     [s for s in CLEAN if not s.startswith('# Totals')], '', 'summary'),
    ('a shard that never started', [], 'qemu exited (1)', 'never reached init'),
    ('a shard that stopped at the firmware', INIT[:2], 'no output for 900s',
     'never reached init'),
    ('fewer results than planned', replace(CLEAN, 'ok 3 Function event - unsupported thing # SKIP',
                                           []), '', 'plans announce 4'),
    ('a failing boot test', INIT + ['1..2', 'ok 1 boot: function_event= defines the events',
                                    '# check failed: 3 reads of 7 bytes by dd',
                                    'not ok 2 boot: the boot-time function events record'] +
     TESTS[1:] + LEAKS + END[:-1] + ['FBE-DONE rc=1'], '', 'boot: the boot-time'),
    ('a kmemleak report', replace(CLEAN, 'ok 1 kmemleak: no suspected leaks',
                                  ['unreferenced object 0xffff888003a1c000 (size 64):',
                                   'not ok 1 kmemleak: 1 suspected leaks']),
     '', 'kmemleak'),
    ('a failed modprobe', replace(CLEAN, 'ok 1 kmemleak: no suspected leaks',
                                  ['ok 1 kmemleak: no suspected leaks', '1..1',
                                   'not ok 1 fuzz: modprobe fevent-sample failed']),
     '', 'modprobe'),
    ('a KASAN report in a passing test',
     replace(CLEAN, 'ok 2 Function event - add and remove',
             KASAN + ['ok 2 Function event - add and remove']), '', 'KASAN'),
    ('a WARNING in a passing test',
     replace(CLEAN, 'ok 2 Function event - add and remove',
             LOCKDEP + ['ok 2 Function event - add and remove']), '', 'WARNING'),
    ('another unwinder warning than the known one',
     replace(CLEAN, 'ok 2 Function event - add and remove',
             ['[   12.0] WARNING: stack going in the wrong direction? at vfs_read+0x46/0x4d',
              'ok 2 Function event - add and remove']), '', 'wrong direction'),
    ('a lockdep splat in a skipped test',
     replace(CLEAN, 'ok 3 Function event - unsupported thing # SKIP',
             ['[   14.0] WARNING: possible circular locking dependency detected',
              'ok 3 Function event - unsupported thing # SKIP']), '', 'circular'),
    ('a lockdep splat only in dmesg',
     replace(CLEAN, 'FBE-DMESG-END',
             ['[   12.5] WARNING: possible recursive locking detected', 'FBE-DMESG-END']),
     '', 'recursive locking'),
    ('a report after the last test',
     replace(CLEAN, 'FBE-TAINT 0', ['[   30.0] BUG: sleeping function called from '
                                    'invalid context', 'FBE-TAINT 0']), '', 'sleeping'),
    ('a tainted kernel at the end', replace(CLEAN, 'FBE-TAINT 0', ['FBE-TAINT 512']),
     '', 'tainted: 512 (W)'),
    ('an unsigned module and a warning', replace(CLEAN, 'FBE-TAINT 0', ['FBE-TAINT 8704']),
     '', 'tainted: 8704 (WE)'),
    ('no taint report', [s for s in CLEAN if not s.startswith('FBE-TAINT')], '', 'taint'),
    ('a known WARN beside one that is not, and taint W',
     replace(CLEAN, 'FBE-TAINT 0', [DISARM, '[   31.0] WARNING: CPU: 0 PID: 9 at '
                                    'kernel/trace/trace_fevent.c:300 fevent_hook+0x1/0x2',
                                    'FBE-TAINT 512']), '', 'fevent_hook'),
    ('no dmesg dump', CLEAN[:CLEAN.index('FBE-DMESG-BEGIN')] + CLEAN[-1:], '', 'dmesg'),
    ('a dmesg dump cut short', [s for s in CLEAN if s != 'FBE-DMESG-END'], '', 'dmesg'),
    ('guest scripts failing with no failed result',
     CLEAN[:-1] + ['FBE-DONE rc=1'], '', 'rc=1'),
]

# A guest fed from the queue: two ftracetest runs of 2 cases, then 1
QUEUED = INIT + ['TAP version 13', '1..2', 'ok 1 Basic trace file check',
                 'ok 2 Function event - add and remove',
                 '# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0',
                 'TAP version 13', '1..1', 'ok 1 Function event - unsupported thing # SKIP',
                 '# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0'] + LEAKS + END
# (name, console, cases handed, what the verdict must name)
QUEUE_CASES = [
    ('a queued case that never reported', QUEUED, 4, 'for 4 results'),
    ('a queued guest without its last summary', QUEUED[:QUEUED.index(
        '# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0')] + LEAKS + END, 3,
     'for 3 results'),
    ('a queued guest that crashed in its second run',
     QUEUED[:QUEUED.index('ok 1 Function event - unsupported thing # SKIP')],
     3, 'did not finish'),
]


ORC = '[  384.0] WARNING: stack going in the wrong direction? at return_to_handler+0x46/0x4d'


def queue_after_reconnect():
    """What serve_queue() answers a second connection's "next"."""
    sockdir = tempfile.mkdtemp(prefix='fbe-selftest-')
    path = os.path.join(sockdir, 'queue')
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(path)
        srv.listen(1)
        srv.settimeout(10)
        q = testqueue.TestQueue(['a'], {'a': 10}, 1)
        threading.Thread(target=testqueue.serve_queue, daemon=True,
                         args=(srv, q, 'job', lambda m: None)).start()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as first:
            first.connect(path)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as second:
            second.settimeout(5)
            second.connect(path)
            second.sendall(b'next\n')
            return second.makefile('rb').readline().decode().strip()
    finally:
        srv.close()
        shutil.rmtree(sockdir)


def read_cpio_gz(path):
    """{name: (mode, data)} of a gzipped newc cpio archive."""
    with gzip.open(path, 'rb') as f:
        raw = f.read()
    out, off = {}, 0
    while off + 110 <= len(raw):
        hdr = raw[off:off + 110]
        if hdr[:6] != b'070701':
            break
        fields = [int(hdr[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name = raw[off + 110:off + 110 + namesize - 1].decode()
        off = (off + 110 + namesize + 3) & ~3
        out[name] = (mode, raw[off:off + size])
        off = (off + size + 3) & ~3
        if name == 'TRAILER!!!':
            break
    return out


# ELF e_machine of each architecture's programs
ELF_MACHINE = {'x86_64': 62, 'arm64': 183}


def elf_machine(data):
    return struct.unpack_from('<H', data, 18)[0] if data[:4] == b'\x7fELF' else None


def base_archive(a):
    """The base initramfs of architecture a, read back: {name: (mode,
    data)}, or a string saying why it could not be built."""
    if a.userland and not os.path.isdir(a.userland_root):
        return f'no {a.userland_root}: make deps ARCH={a.name}'
    if not os.path.isdir(initramfs.FTRACE):
        return 'no build/linux (make tree)'
    tmp = tempfile.mkdtemp(prefix='fbe-selftest-')
    try:
        out = os.path.join(tmp, 'base.cpio.gz')
        initramfs.make_base_initramfs(a, os.path.join(tmp, 'no-obj'), out)
        return read_cpio_gz(out)
    except SystemExit as e:
        return str(e)
    finally:
        shutil.rmtree(tmp)


def arch_cases(result):
    """arch.py and initramfs.py, for every architecture."""
    for a in arch.ARCHES.values():
        cmd = a.qemu_cmd('/k/' + a.image, '/i', 'tcg', f'console={a.console}', 2, 2048)
        ok = (cmd[0] == a.qemu and cmd[cmd.index('-kernel') + 1].endswith(a.image) and
              'tcg,thread=single' in cmd and cmd[cmd.index('-machine') + 1] == a.machine[1])
        result(ok, f'arch: {a.name} boots its image under single-threaded TCG', str(cmd))
        q = ' '.join(a.queue_args('/s'))
        want = 'chardev:queue' if a.queue_tty.startswith('/dev/ttyS') else 'virtconsole,chardev=queue'
        result(want in q and 'socket,id=queue,path=/s' in q,
               f'arch: {a.name} connects the queue to {a.queue_tty}', q)
        files = base_archive(a)
        if isinstance(files, str):
            result(True, f'initramfs: {a.name} archive', skip=files)
            continue
        bb = files.get('bin/busybox', (0, b''))[1]
        sh = files.get('bin/sh', (0, b''))[1]
        tty = files.get('fbe/queue-tty', (0, b''))[1].decode().strip()
        ok = (elf_machine(bb) == ELF_MACHINE[a.name] and elf_machine(sh) == ELF_MACHINE[a.name]
              and tty == a.queue_tty and 'init' in files and 'ftrace/ftracetest' in files)
        result(ok, f'initramfs: {a.name} archive has its own busybox and /bin/sh, '
               'and the queue device',
               f'busybox {elf_machine(bb)}, sh {elf_machine(sh)}, queue-tty {tty!r}')
    for a in arch.NOLIBC.values():
        cmd = a.qemu_cmd('/k/' + a.image, '/i', 'tcg', f'console={a.console}', 1, 512)
        ok = (cmd[0] == a.qemu and cmd[cmd.index('-kernel') + 1].endswith(a.image) and
              cmd[cmd.index('-cpu') + 1] == (a.cpu or 'max') and
              cmd[cmd.index('-machine') + 1] == a.machine[1] and
              a.name not in arch.ARCHES and os.path.exists(a.config))
        result(ok, f'arch: nolibc {a.name} boots {a.image} on {a.machine[1]}, '
               'and make check does not take it', str(cmd))
    # make check-nolibc's console: its init prints no ftracetest summary
    lines = ['FBE-INIT', 'KTAP version 1', '1..2', 'ok 1 the sample module loads',
             'ok 2 u32 b # SKIP 32-bit without BTF', 'FBE-TAINT 0', 'FBE-DMESG-BEGIN',
             '<6>[    0.1] Run /init as init process', 'FBE-DMESG-END', 'FBE-DONE rc=0']
    v = verdict.judge(lines, 'done', ftracetest=False)
    bad = verdict.judge(replace(lines, 'ok 1 the sample module loads',
                             ['not ok 1 the sample module loads']), 'done',
                     ftracetest=False)
    result(v.ok and (v.npass, v.nskip) == (1, 1) and not bad.ok,
           'a nolibc guest passes without an ftracetest summary, and fails a case',
           f'{v.problems} {bad.problems}')
    try:
        got = (arch.get('aarch64').name, arch.get('x86').name)
    except SystemExit as e:
        got = str(e)
    refused = False
    try:
        arch.get('pdp11')
    except SystemExit:
        refused = True
    result(got == ('arm64', 'x86_64') and refused,
           "arch: the kernel's names are known, an unknown one is refused", str(got))


NR_ARCH_CASES = 3 * len(arch.ARCHES) + len(arch.NOLIBC) + 2


def main():
    n = fail = 0
    print('TAP version 13')
    print(f'1..{len(CASES) + len(QUEUE_CASES) + 10 + NR_ARCH_CASES}')

    def result(ok, desc, why='', skip=''):
        nonlocal n, fail
        n += 1
        if skip:
            print(f'ok {n} harness: {desc} # SKIP {skip}')
            return
        fail += not ok
        print(f'{"ok" if ok else "not ok"} {n} harness: {desc}' + (f' # {why}' if why and not ok else ''))

    v = verdict.judge(CLEAN)
    result(v.ok and (v.npass, v.nskip) == (3, 1), 'a clean console passes',
           f'{v.npass} passed, {v.nfail} failed, {v.nskip} skipped, problems {v.problems}')
    v = verdict.judge(replace(CLEAN, INIT[-1], ['FBE-INIT 6.12.57 cpus=2']))
    result(v.ok, 'init is found with or without escape sequences', str(v.problems))
    v = verdict.judge(replace(CLEAN, 'FBE-TAINT 0', ['FBE-TAINT 8192']))
    result(v.ok, 'an unsigned module alone (taint E) passes', str(v.problems))
    v = verdict.judge(replace(CLEAN, 'FBE-TAINT 0', [DISARM, 'FBE-TAINT 512']))
    result(v.ok and v.known == [DISARM.strip()],
           "a known WARN() taints the kernel (W) and passes, and is shown",
           f'{v.problems} {v.known}')
    v = verdict.judge(replace(CLEAN, 'ok 2 Function event - add and remove',
                           [ORC, 'ok 2 Function event - add and remove']))
    result(v.ok and v.known == [ORC.strip()],
           'a report listed in config/lists/known-reports passes, and is shown',
           f'{v.problems} {v.known}')
    for desc, lines, status, must in CASES:
        v = verdict.judge(lines, status)
        text = ' '.join(v.problems + [f'{n} {r} {c}' for n, r, c in v.results
                                      if r not in ('PASS', 'XFAIL', 'SKIP')])
        good = not v.ok and v.nfail > 0 and must in text
        result(good, f'{desc} fails the run', f'ok={v.ok}, said: {text!r}')
    v = verdict.judge(QUEUED, handed=3)
    result(v.ok and (v.npass, v.nskip) == (3, 1), 'a queued guest that ran what it took passes',
           f'{v.problems}')
    for desc, lines, handed, must in QUEUE_CASES:
        v = verdict.judge(lines, '', handed=handed)
        text = ' '.join(v.problems)
        result(not v.ok and must in text, f'{desc} fails the run', f'said: {text!r}')
    # The queue hands out every case once, longest first, the last ones small
    w = {'a': 400, 'b': 300, 'c': 100, 'd': 10, 'e': 10, 'f': 10, 'g': 5}
    q = testqueue.TestQueue(list(w), w, 2)
    chunks = []
    while True:
        c = q.take(f'ftrace{len(chunks) % 2}')
        if not c:
            break
        chunks.append(c)
    got = sorted(t for c in chunks for t in c)
    result(got == sorted(w) and chunks[0] == ['a'] and len(chunks[-1]) <= 2 and
           sum(map(len, q.given.values())) == len(w),
           'the test queue hands out every case once, longest first', str(chunks))
    # The stall limit grows with the case running and the machine's speed
    q = testqueue.TestQueue(['long', 'a', 'b'], {'long': 400, 'a': 20, 'b': 20}, 1)
    q.take('j')                         # 'long' alone
    q.current['j'] = (q.current['j'][0] - 800, q.current['j'][1])   # took 800 s
    first = q.stall('j', 900)           # 3 x 400 at speed 1
    q.take('j')                         # 'long' done: speed 2
    later = q.stall('j', 900)           # 3 x 20 x 2 < 900
    result(first == 1200 and abs(q.speed() - 2) < 0.01 and later == 900,
           'the stall limit scales with the running case and the measured speed',
           f'first {first}, speed {q.speed()}, later {later}')
    # Past CI's deadline the queue hands out nothing, and says so
    q = testqueue.TestQueue(['a', 'b'], {'a': 1, 'b': 1}, 1, deadline=0)
    c = q.take('ftrace0')
    result(c == [] and q.expired and len(q) == 2,
           'past its deadline the queue hands out nothing and says it expired', str(c))
    # A QEMU that goes away (a KVM guest that did not come up) leaves the
    # queue to the next one boot() starts for the job
    said = ''
    try:
        said = queue_after_reconnect()
    except OSError as e:
        said = repr(e)
    result(said == '/ftrace/test.d/a', 'the queue answers the QEMU that replaces a failed one',
           f'said: {said!r}')
    # A test named by a path that is not there is refused before any guest
    here = os.path.abspath(__file__)
    td = os.path.join(initramfs.FTRACE, 'test.d')
    known = next((os.path.relpath(os.path.join(d, f), td) for d, _, fs in os.walk(td)
                  for f in sorted(fs) if f.endswith('.tc')), None)
    bad = ['test.d/dynevent/fevent_btf.tc', '/nonexistent/x.tc']
    got = initramfs.missing_tests([here, 'none'] + ([known] if known else []) + bad)
    result(got == bad and known is not None,
           'a test path that names nothing is refused', f'missing {got}, known {known}')
    arch_cases(result)
    print(f'{n - fail} passed, {fail} failed')
    if '--record' in sys.argv[1:]:
        results.record('selftest', passed=n - fail, failed=fail, skipped=0)
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main())
