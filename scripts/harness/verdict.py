#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a guest's console means: the KTAP results and one verdict.

As kunit_parser.py is to kunit_tool: judge() takes the console of a
guest job (a list of lines, escape sequences stripped by clean()) and
returns a Verdict.  A failing test, a kernel report (panic, oops, BUG,
WARNING, KASAN, UBSAN, lockdep, RCU stall, leak) during a test or
anywhere in dmesg, a tainted kernel, a guest that crashed, hung or
never started, or a missing summary all fail it.  Nothing here knows
QEMU or an architecture.  scripts/test/harness_test.py feeds it canned consoles
(scripts/test/test_data/) of each kind.
"""

import os
import re

from .paths import TOP

# What in a console log means the kernel is not healthy.
BAD = re.compile(r'(Kernel panic|BUG:|Oops|WARNING:|general protection fault|'
                 r'UBSAN:|KASAN:|possible recursive locking|'
                 r'possible circular locking|inconsistent lock state|'
                 r'suspicious RCU usage|rcu_sched self-detected stall|'
                 r'rcu: INFO: |unreferenced object|kmemleak: .*suspected|'
                 r'kernel BUG at|blocked for more than|'
                 r'soft lockup|hard LOCKUP)')
# A few of those words also appear in harmless lines.
BENIGN = re.compile(r'(FBE-|^# |^ok |^not ok |Testing .*PASSED|'
                    r'TAINT_|ftrace_dump_on_oops)')
KTAP_RESULT = re.compile(r'^(ok|not ok) (\d+) (.*?)(?:\s+# (.*))?$')
# Terminal escape sequences (the firmware and the kernel's console
# both send some) and carriage returns.
ESCAPES = re.compile(r'\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()#][0-9A-Za-z]|'
                     r'\x1b[=>cDEHM78]|\r')
# /proc/sys/kernel/tainted, bit by bit (Documentation/admin-guide/tainted-kernels.rst)
TAINT_FLAGS = 'PFSRMBUDAWCIOELKXTN'
# E (an unsigned module): the kernel's lockdown LSM selects MODULE_SIG and
# the harness does not sign its modules (config/kconfig/base.config).  It says
# nothing about the code under test; every other flag fails the job.
TAINT_ALLOWED = 1 << TAINT_FLAGS.index('E')


def clean(s):
    return ESCAPES.sub('', s)


def taint_names(value):
    return ''.join(TAINT_FLAGS[i] for i in range(len(TAINT_FLAGS))
                   if value >> i & 1) or '-'


def known_reports(path=os.path.join(TOP, 'config/lists/known-reports')):
    """[(regex, reason)] of config/lists/known-reports."""
    out = []
    try:
        for line in open(path):
            if line.strip() and not line.startswith('#'):
                pat, _, reason = line.rstrip('\n').partition('\t')
                out.append((re.compile(pat), reason.strip()))
    except OSError:
        pass
    return out


KNOWN_REPORTS = known_reports()


def known_report(s):
    for pat, reason in KNOWN_REPORTS:
        if pat.search(s):
            return reason
    return None


def is_bad(s):
    return bool(BAD.search(s)) and not BENIGN.search(s) and not known_report(s)


def bad_lines(lines):
    return [i for i, s in enumerate(lines) if is_bad(s)]


def ktap_result(s):
    """(name, result, comment) of a KTAP result line, else None.  "not
    ok" is a failure whatever its directive: ftracetest reports
    UNSUPPORTED and UNTESTED as "ok ... # SKIP"."""
    m = KTAP_RESULT.match(s.strip())
    if not m:
        return None
    ok, _, name, comment = m.groups()
    comment = (comment or '').strip()
    if ok == 'ok':
        if comment.upper().startswith('SKIP'):
            res = 'SKIP'
        elif comment.upper().startswith('XFAIL'):
            res = 'XFAIL'
        else:
            res = 'PASS'
    else:
        res = comment.split()[0].upper() if comment else 'FAIL'
        if res in ('SKIP', 'XFAIL', 'TODO'):
            res = 'FAIL'
    return name.strip(), res, comment


def parse_ktap(lines):
    """Return [(name, result, comment)] from the KTAP output."""
    return [r for r in map(ktap_result, lines) if r]


class Verdict:
    """What judge() found in one guest job's console."""

    def __init__(self):
        self.results = []     # [(name, result, comment)]
        self.problems = []    # failures not tied to one test
        self.known = []       # known reports (config/lists/known-reports) seen
        self.planned = 0

    @property
    def npass(self):
        return sum(r in ('PASS', 'XFAIL') for _, r, _ in self.results)

    @property
    def nskip(self):
        return sum(r == 'SKIP' for _, r, _ in self.results)

    @property
    def nfail(self):
        return sum(r not in ('PASS', 'XFAIL', 'SKIP') for _, r, _ in self.results) + \
            len(self.problems)

    @property
    def ok(self):
        return self.nfail == 0


def judge(lines, status='', ftracetest=True, handed=None):
    """One verdict for a guest job's console.

    A kernel report on the console fails the test that was running (the
    next one to report a result: ftracetest prints a result after its
    test) or, outside any test, the job.  The guest ends with its taint
    flags and the whole dmesg between FBE-DMESG markers: a report there
    that the console did not show, or any taint, fails the job.  So do a
    guest that never reached init, did not finish, announced more results
    than it gave, or ran ftracetest without its summary line.  handed:
    how many results the cases the guest took from a TestQueue give (a
    case with "# flags: instance" gives two); the summaries of its
    ftracetest runs must count as many."""
    v = Verdict()
    console, dmesg, in_dmesg = [], [], False
    for s in lines:
        s = clean(s)
        if 'FBE-DMESG-BEGIN' in s:
            in_dmesg = True
        elif 'FBE-DMESG-END' in s:
            in_dmesg = False
        elif in_dmesg and not s.startswith('FBE-'):
            dmesg.append(s)
        else:
            console.append(s)
    pending = []              # kernel reports waiting for the next result
    seen_reports = set()
    for s in console:
        r = ktap_result(s)
        if r:
            name, res, comment = r
            if pending and res in ('PASS', 'XFAIL', 'SKIP'):
                res, comment = 'FAIL', 'kernel: ' + pending[0]
            v.results.append((name, res, comment))
            pending = []
            continue
        m = re.match(r'^\s*1\.\.(\d+)', s)
        if m:
            v.planned += int(m.group(1))
        if BAD.search(s) and known_report(s):
            v.known.append(s.strip())
        if is_bad(s):
            key = re.sub(r'^\[[ 0-9.]*\]\s*', '', s)
            seen_reports.add(key)
            pending.append(s.strip())
    if pending:
        v.problems.append(f'kernel report after the last result: {pending[0]}')
    if not any('FBE-INIT' in s for s in console):
        v.problems.append(f'the guest never reached init ({status or "no output"})')
    done = [s for s in console if 'FBE-DONE' in s]
    if not done:
        v.problems.append(f'the guest did not finish ({status or "no FBE-DONE"}) '
                          f'after {len(v.results)} results')
    else:
        m = re.search(r'rc=(\d+)', done[-1])
        rc = int(m.group(1)) if m else 1
        if rc and v.ok:
            v.problems.append(f'the guest scripts exited with rc={rc} '
                              'and no failed result')
    if v.planned != len(v.results):
        v.problems.append(f'KTAP plans announce {v.planned} results, '
                          f'{len(v.results)} reported')
    if handed is not None:
        ftracetest = handed > 0
        counted = sum(sum(map(int, re.findall(r':(\d+)', s)))
                      for s in console if s.startswith('# Totals:'))
        if done and counted != handed:
            v.problems.append(f'handed ftracetest cases for {handed} results, '
                              f'its summaries count {counted}')
    if ftracetest and done and not any(s.startswith('# Totals:') for s in console):
        v.problems.append('ftracetest printed no summary (# Totals:)')
    taint = [s for s in console if s.startswith('FBE-TAINT')]
    if done and not taint:
        v.problems.append('the guest did not report its taint flags')
    # A WARN() taints the kernel: one of config/lists/known-reports (the base's,
    # listed there) does not fail the job, any other does on its own
    warns = [s for s in console + dmesg if 'WARNING:' in s and BAD.search(s)]
    allowed = TAINT_ALLOWED
    if warns and all(known_report(s) for s in warns):
        allowed |= 1 << TAINT_FLAGS.index('W')
    for s in taint:
        m = re.match(r'FBE-TAINT (\d+)', s)
        value = int(m.group(1)) if m else -1
        if value & ~allowed:
            v.problems.append(f'the kernel is tainted: {value} '
                              f'({taint_names(value) if value > 0 else "?"})')
    if done and not any('FBE-DMESG-END' in s for s in lines):
        v.problems.append('the guest did not dump its dmesg')
    for s in dmesg:
        key = re.sub(r'^(<\d+>)?\[[ 0-9.]*\]\s*', '', s)
        if is_bad(s) and key not in seen_reports:
            seen_reports.add(key)
            v.problems.append(f'dmesg (not on the console): {s.strip()}')
    return v


def test_log(lines, name, tail=25):
    """The end of the log ftracetest printed (after its result) for a test."""
    out, grab = [], False
    for s in lines:
        r = ktap_result(s)
        if r:
            if grab:
                break
            grab = r[0] == name.strip()
            continue
        if grab and s.startswith('#'):
            out.append(s)
    return out[-tail:]
