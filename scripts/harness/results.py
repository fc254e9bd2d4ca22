#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The one result channel of the harness: JSON lines, as kunit_tool's --json.

Every step writes what it found as one record, a JSON object on a line of
build/results.jsonl ($FBE_RESULTS), and nothing reads a step's result
back from its text output.  A record has:

  run      the run it belongs to: $FBE_RUN, set once by the outermost
           command (.ci/run, or make check run alone)
  step     the top-level step: $FBE_STEP ("make check", "make check-docs")
  name     what it counts: a job ("guests/fault"), "selftest",
           "nolibc/ppc32-btfy", or the step itself
  arch     the architecture, where it matters
  passed, failed, skipped
           counts, in a record that counts tests
  seconds  how long it took (a record with only seconds is a phase of
           the time accounting: "tree", "build", "guests")
  part     true for times that overlap others (the jobs of the CPUs)
  rc       in the record the step's runner writes: the step's exit status
  reason   why a step or a test was skipped; problems: what failed

  results.py run STEP -- CMD...   run CMD as STEP, timed, its status recorded
  results.py add NAME [--passed N] [--failed N] [--skipped N]
                 [--seconds S] [--arch A] [--reason R] [--part]
  results.py total [--step STEP]  the records of this run added up, the
                                  time they took, "N passed, N failed,
                                  N skipped"; exit 1 if any failed
  results.py fits STEP SECONDS    whether STEP, which takes SECONDS on the
                                  machine config/lists/test-weights was measured
                                  on, fits in what is left of $CI_BUDGET;
                                  if not, records it skipped and exits 1
  results.py last NAME            the seconds of NAME's latest record
"""

import argparse
import json
import os
import subprocess
import sys
import time

from .paths import BUILD

PATH = os.environ.get('FBE_RESULTS', os.path.join(BUILD, 'results.jsonl'))
COUNTS = ('passed', 'failed', 'skipped')


def run_id():
    """This run's id: $FBE_RUN, or a new one exported to what it starts."""
    if not os.environ.get('FBE_RUN'):
        os.environ['FBE_RUN'] = f'{time.strftime("%Y%m%dT%H%M%S")}-{os.getpid()}'
    return os.environ['FBE_RUN']


def record(name, path=None, **fields):
    """Append one record; fields with the value None are left out."""
    rec = {'run': run_id(), 'step': os.environ.get('FBE_STEP', name), 'name': name,
           'at': round(time.time(), 1)}
    rec.update({k: v for k, v in fields.items() if v is not None})
    path = path or PATH
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'a') as f:
        f.write(json.dumps(rec, sort_keys=True) + '\n')
    return rec


def load(path=None, run=None):
    """The records of run (all runs if None), in the order written."""
    recs = []
    try:
        with open(path or PATH) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                if run is None or r.get('run') == run:
                    recs.append(r)
    except FileNotFoundError:
        pass
    return recs


def counts(r):
    return any(k in r for k in COUNTS)


def add_up(recs, step=None):
    """(passed, failed, skipped) of the records, step's alone if given.

    A step's runner records its exit status (rc): a step that counted
    nothing passes or fails as one test by it, and one that exits non-zero
    although its own counts say nothing failed is one failure more."""
    if step is not None:
        recs = [r for r in recs if r.get('step') == step]
    total = dict.fromkeys(COUNTS, 0)
    for r in recs:
        if 'rc' in r:
            continue
        for k in COUNTS:
            total[k] += int(r.get(k, 0))
    for r in recs:
        if 'rc' not in r:
            continue
        mine = [x for x in recs if x.get('step') == r['step'] and 'rc' not in x and counts(x)]
        if not mine:
            total['passed' if r['rc'] == 0 else 'failed'] += 1
        elif r['rc'] != 0 and not any(int(x.get('failed', 0)) for x in mine):
            total['failed'] += 1
    return total['passed'], total['failed'], total['skipped']


def last_seconds(name, recs=None):
    """The seconds of name's latest record that has them, or None."""
    for r in reversed(recs if recs is not None else load()):
        if r.get('name') == name and 'seconds' in r:
            return r['seconds']
    return None


def report(recs, step=None, out=sys.stdout):
    """Print the failures, the time and the sum of the records."""
    if step is not None:
        recs = [r for r in recs if r.get('step') == step]
    for r in recs:
        if int(r.get('failed', 0)) or r.get('rc'):
            what = ', '.join(f'{r[k]} {k}' for k in COUNTS if k in r)
            print(f'FAILED {r["name"]}{" (" + r["arch"] + ")" if r.get("arch") else ""}: '
                  f'{what or "exit status " + str(r["rc"])}', file=out)
            for p in r.get('problems', []):
                print(f'  {p}', file=out)
        elif r.get('reason') and int(r.get('skipped', 0)):
            print(f'skipped {r["name"]}: {r["reason"]}', file=out)
    print('=== where the time went (seconds)', file=out)
    for r in recs:
        if 'seconds' in r and ('rc' in r or not counts(r) or r.get('part')):
            print(f'{"# " if r.get("part") else ""}{r["name"]}'
                  f'{"-" + r["arch"] if r.get("arch") and r["arch"] != "x86_64" else ""}'
                  f' {r["seconds"]:.0f}', file=out)
    if os.environ.get('FBE_CI_START'):
        print(f'total {time.time() - float(os.environ["FBE_CI_START"]):.0f}', file=out)
    p, f, s = add_up(recs)
    print(f'{p} passed, {f} failed, {s} skipped', file=out)
    return f


def fits(name, seconds, recs=None, now=None):
    """(True, '') if a step taking seconds (on the machine of
    config/lists/test-weights) fits the CI budget's time left, else (False, why).

    The machine's speed is the latest "guests" phase against the 800 s it
    takes there, never counted faster than that machine."""
    budget = int(os.environ.get('CI_BUDGET', 4500))
    reserve = int(os.environ.get('CI_RESERVE', 300))
    start = float(os.environ.get('FBE_CI_START', now or time.time()))
    left = budget - ((now or time.time()) - start) - reserve
    guests = last_seconds('guests', recs)
    speed = max(1.0, (guests or 800) / 800)
    need = seconds * speed
    if left >= need:
        return True, ''
    return False, (f'{left:.0f} s left of CI_BUDGET={budget}, it needs about {need:.0f} s')


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('run')
    p.add_argument('step')
    p.add_argument('command', nargs=argparse.REMAINDER)
    p = sub.add_parser('add')
    p.add_argument('name')
    for k in COUNTS:
        p.add_argument(f'--{k}', type=int)
    p.add_argument('--seconds', type=float)
    p.add_argument('--arch')
    p.add_argument('--reason')
    p.add_argument('--part', action='store_true')
    p = sub.add_parser('total')
    p.add_argument('--step')
    p = sub.add_parser('fits')
    p.add_argument('step')
    p.add_argument('seconds', type=float)
    p = sub.add_parser('last')
    p.add_argument('name')
    a = ap.parse_args(argv)

    if a.cmd == 'run':
        cmd = a.command[1:] if a.command[:1] == ['--'] else a.command
        run_id()
        os.environ['FBE_STEP'] = a.step
        t0 = time.time()
        print(f'=== {a.step}', flush=True)
        rc = subprocess.call(cmd)
        record(a.step, rc=rc, seconds=round(time.time() - t0, 1))
        print(f'=== {a.step}: rc={rc}, {time.time() - t0:.0f}s', flush=True)
        return rc
    if a.cmd == 'add':
        record(a.name, arch=a.arch, reason=a.reason, part=a.part or None,
               seconds=a.seconds, **{k: getattr(a, k) for k in COUNTS})
        return 0
    if a.cmd == 'total':
        return 1 if report(load(run=run_id()), a.step) else 0
    if a.cmd == 'fits':
        ok, why = fits(a.step, a.seconds)
        if not ok:
            record(a.step, skipped=1, reason=why)
            print(f'{a.step} skipped: {why}')
        return 0 if ok else 1
    if a.cmd == 'last':
        s = last_seconds(a.name)
        if s is None:
            return 1
        print(f'{s:.0f}')
        return 0
    return 2


if __name__ == '__main__':
    sys.exit(main())
