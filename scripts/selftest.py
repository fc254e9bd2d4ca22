#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The harness's own test: no kernel, a second or two.

Feeds qemu.judge() canned guest consoles, one per way a run can go
wrong, and checks that each gives a failing verdict naming the cause
(and that a clean console passes, so that the check itself can fail).
Part of make check; prints KTAP and "N passed, N failed".
"""

import os
import shutil
import socket
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu  # noqa: E402

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
        q = qemu.TestQueue(['a'], {'a': 10}, 1)
        threading.Thread(target=qemu.serve_queue, daemon=True,
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


def main():
    n = fail = 0
    print('TAP version 13')
    print(f'1..{len(CASES) + len(QUEUE_CASES) + 8}')

    def result(ok, desc, why=''):
        nonlocal n, fail
        n += 1
        fail += not ok
        print(f'{"ok" if ok else "not ok"} {n} harness: {desc}' + (f' # {why}' if why and not ok else ''))

    v = qemu.judge(CLEAN)
    result(v.ok and (v.npass, v.nskip) == (3, 1), 'a clean console passes',
           f'{v.npass} passed, {v.nfail} failed, {v.nskip} skipped, problems {v.problems}')
    v = qemu.judge(replace(CLEAN, INIT[-1], ['FBE-INIT 6.12.57 cpus=2']))
    result(v.ok, 'init is found with or without escape sequences', str(v.problems))
    v = qemu.judge(replace(CLEAN, 'FBE-TAINT 0', ['FBE-TAINT 8192']))
    result(v.ok, 'an unsigned module alone (taint E) passes', str(v.problems))
    v = qemu.judge(replace(CLEAN, 'ok 2 Function event - add and remove',
                           [ORC, 'ok 2 Function event - add and remove']))
    result(v.ok and v.known == [ORC.strip()],
           'a report listed in config/known-reports passes, and is shown',
           f'{v.problems} {v.known}')
    for desc, lines, status, must in CASES:
        v = qemu.judge(lines, status)
        text = ' '.join(v.problems + [f'{n} {r} {c}' for n, r, c in v.results
                                      if r not in ('PASS', 'XFAIL', 'SKIP')])
        good = not v.ok and v.nfail > 0 and must in text
        result(good, f'{desc} fails the run', f'ok={v.ok}, said: {text!r}')
    v = qemu.judge(QUEUED, handed=3)
    result(v.ok and (v.npass, v.nskip) == (3, 1), 'a queued guest that ran what it took passes',
           f'{v.problems}')
    for desc, lines, handed, must in QUEUE_CASES:
        v = qemu.judge(lines, '', handed=handed)
        text = ' '.join(v.problems)
        result(not v.ok and must in text, f'{desc} fails the run', f'said: {text!r}')
    # The queue hands out every case once, longest first, the last ones small
    w = {'a': 400, 'b': 300, 'c': 100, 'd': 10, 'e': 10, 'f': 10, 'g': 5}
    q = qemu.TestQueue(list(w), w, 2)
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
    td = os.path.join(qemu.FTRACE, 'test.d')
    known = next((os.path.relpath(os.path.join(d, f), td) for d, _, fs in os.walk(td)
                  for f in sorted(fs) if f.endswith('.tc')), None)
    bad = ['test.d/dynevent/fevent_btf.tc', '/nonexistent/x.tc']
    got = qemu.missing_tests([here, 'none'] + ([known] if known else []) + bad)
    result(got == bad and known is not None,
           'a test path that names nothing is refused', f'missing {got}, known {known}')
    print(f'{n - fail} passed, {fail} failed')
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main())
