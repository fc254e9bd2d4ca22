#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench [ARCH=arm64] [MODES=icount]: the cost per hit of a function
event, side by side.

Boots the normal kernel twice, one after the other, each guest running
guest/bench.sh (the sample module's fevent_sample_bench() called N times
in a loop for each case):

  wall    plain TCG: guest time is host wall-clock time, noisy, and the
          costs are those of emulated, not real, instructions;
  icount  TCG with -icount shift=0,sleep=off: the guest clock advances
          1 ns per instruction, so "ns" are instructions executed:
          deterministic, and what the code path costs in instructions.

Prints a table per mode (median and fastest run, spread = (max-min)/median,
overhead = case - case 1, ratio = overhead / overhead of case 2; the
overhead is that of the fastest run under wall, of the median under
icount), the kernel memory (slab, vmalloc, percpu) an event takes, defined
and enabled, for function, kprobe and fprobe events on the same 1,000
functions and per function of an event over a pattern, the bytes one
more event of each kind keeps by call site (kmem and percpu events),
checks the targets, writes build/bench/bench.csv, create.csv, mem.csv, alloc.csv and bench.png
(build/bench-arm64/ for ARCH=arm64).  Function events are
compared with fprobe events, or where the kernel has none (arm64 6.12),
with kprobe and kretprobe events.  Cases are run round after round (every case once per
round), so that a slow stretch of the host does not fall on one case.
"""

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

from harness import arch as arches
from harness.boot import boot, show_tail
from harness.initramfs import make_initramfs
from harness.paths import BUILD, LOGS, TOP
from harness.verdict import bad_lines


def suffix(arch):
    """build/bench on x86_64, build/bench-arm64 on arm64"""
    return '' if arch.name == 'x86_64' else f'-{arch.name}'


MODES = {
    'wall': [],
    'icount': ['-icount', 'shift=0,sleep=off'],
}
# Calls per run and runs per case.  Under icount every run gives the same
# count.  The wall clock of a TCG guest is disturbed by everything else on
# the host, and only ever made slower: many short runs, and the fastest
# (least disturbed) one is the estimate, as timeit does.
DEFAULTS = {
    'wall': (50000, 21, 'min'),
    'icount': (200000, 5, 'median'),
}


def guest_files(arch, obj):
    """What the bench guest needs beside the kernel: guest/bench.sh, the
    awk program of its allocations (guest/allocs.awk), and the floor
    case's module (guest/bench-floor), built against @obj."""
    src = os.path.join(TOP, 'guest/bench-floor')
    out = os.path.join(BUILD, 'bench-floor' + suffix(arch))
    # An external module builds in its directory: a copy of the source
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(src, out)
    subprocess.run(['make', '-s', '-C', obj, f'M={out}', f'ARCH={arch.karch}',
                    f'CROSS_COMPILE={arch.cross}', 'modules'], check=True)
    return [(os.path.join(TOP, 'guest/bench.sh'), '/fbe/demo'),
            (os.path.join(TOP, 'guest/allocs.awk'), '/fbe/allocs.awk'),
            (os.path.join(out, 'bench-floor.ko'), '/fbe/bin/bench-floor.ko')]


def run_guest(arch, mode, obj, args, timeout, results):
    calls, runs, _ = DEFAULTS[mode]
    kcmdline = (f'BENCH_N={args.calls or calls} BENCH_RUNS={args.runs or runs} '
                f'BENCH_CREATE={args.create} BENCH_CASES={args.cases} '
                f'BENCH_REGS={",".join(arch.arg_regs[1:4])} '
                f'BENCH_INSN={arch.ftrace_insn_len}')
    initrd = os.path.join(BUILD, f'initramfs-bench{suffix(arch)}-{mode}.cpio.gz')
    make_initramfs(arch, obj, 'run', [], initrd,
                   extra_files=guest_files(arch, obj))
    cmdline = f'console={arch.console} panic=-1 loglevel=4 {kcmdline}'
    logpath = os.path.join(LOGS, f'console-bench{suffix(arch)}-{mode}.log')
    lines, status = boot(arch, obj, initrd, cmdline, logpath, timeout,
                         extra_qemu=MODES[mode])
    results[mode] = (lines, status, logpath)


def parse(lines):
    runs, create, mem, errors, skipped = {}, {}, {}, [], []
    for s in lines:
        f = s.split()
        if not f:
            continue
        if f[0] == 'BENCH' and len(f) == 5:
            calls, ns = int(f[3]), int(f[4])
            runs.setdefault(f[1], []).append(ns / calls)
        elif f[0] == 'CREATE' and len(f) == 5:
            create[(f[1], f[2])] = (int(f[3]), int(f[4]))
        elif f[0] == 'MEM' and len(f) == 6:
            # kind, events or functions, kB once defined, kB once enabled,
            # kB a reading settles within; the rounds of a kind add up, so
            # its figures are their mean
            n, d, e, r, k = mem.get(f[1], (0, 0, 0, 0, 0))
            mem[f[1]] = (n + int(f[2]), d + int(f[3]), e + int(f[4]), r + 1,
                         max(k, int(f[5])))
        elif f[0] == 'BENCH-ERROR':
            errors.append(s)
        elif f[0] == 'BENCH-SKIP':
            skipped.append(s)
    return runs, create, mem, errors, skipped


def alloc_met(allocs):
    """The object-by-object target: one function event takes no more than
    one kprobe event.  None when either was not counted."""
    totals = {k: sum(sites.values()) for k, sites in allocs.items()}
    if 'fevent' not in totals or 'kprobe' not in totals:
        return None
    return totals['fevent'] <= totals['kprobe']


def mem_report(mem, exact=None):
    """Kernel memory (slab + vmalloc + percpu) per event, or per matched function of
    an event over a pattern, defined and enabled.  Targets: a function
    event takes no more than a kprobe event on the same function, and an
    enabled entry event over a pattern at most 48 bytes a function.  A
    difference /proc/meminfo cannot tell apart is decided by @exact,
    alloc_met() of the same run."""
    ok, rows = True, []
    print('--- kernel memory (slab + vmalloc + percpu, /proc/meminfo): bytes per event, '
          'per function for a pattern')
    for kind, (n, dkb, ekb, *_) in mem.items():
        d, e = dkb * 1024 / n, ekb * 1024 / n
        unit = 'functions' if kind.endswith('-glob') else 'events'
        print(f'  {kind:<12} defined {d:>8.0f}  enabled {e:>8.0f}  ({n} {unit})')
        rows.append([kind, n, dkb, ekb, round(d), round(e)])
    fe, kp = mem.get('fevent'), mem.get('kprobe')
    if fe and kp:
        fb, kb = fe[2] * 1024 / fe[0], kp[2] * 1024 / kp[0]
        # What a round of n events tells apart: a reading settles within
        # the kB its MEM line gives (guest/bench.sh's kmem())
        res = max(fe[4], kp[4]) * 1024 / min(fe[0] / fe[3], kp[0] / kp[3])
        if fb <= kb:
            verdict = 'met'
        elif fb - kb <= res:
            ok &= bool(exact)
            decided = {True: 'met', False: 'NOT met', None: 'not counted: NOT met'}[exact]
            verdict = (f'within what /proc/meminfo tells apart ({res:.0f} bytes an '
                       f'event), object by object {decided}')
        else:
            verdict, ok = 'NOT met', False
        print(f'  {verdict}: an enabled function event / kprobe event = '
              f'{fb:.0f} / {kb:.0f} bytes (target: no more)')
    kc = mem.get('kprobe-caller')
    if fe and kc:
        # Not a target: the same record (ip and the caller) both ways
        print(f'  a function event / a kprobe event recording the caller too '
              f'= {fe[2] * 1024 / fe[0]:.0f} / {kc[2] * 1024 / kc[0]:.0f} bytes enabled')
    g = mem.get('fevent-glob')
    if g:
        per = g[2] * 1024 / g[0]
        good = per <= 48
        ok &= good
        print(f'  {"met" if good else "NOT met"}: an enabled event over a pattern = '
              f'{per:.0f} bytes a function (target <= 48)')
    return ok, rows


def parse_allocs(lines):
    """"ALLOC kind site bytes": what one more event of a kind keeps
    allocated, by call site (guest/bench.sh's allocs())."""
    allocs = {}
    for s in lines:
        f = s.split()
        if len(f) == 4 and f[0] == 'ALLOC':
            allocs.setdefault(f[1], {})[f[2]] = int(f[3])
    return allocs


def alloc_report(allocs):
    """The allocations of one event, by call site, a column a kind: where a
    function event's bytes go against a kprobe event's, to the byte (the
    /proc/meminfo figures are means over 1,000, within 16 kB).  The target
    of mem_report() on these exact figures: a function event takes no more
    than a kprobe event.  Returns whether it is met and the rows (kind,
    site, bytes), totals included."""
    kinds = list(allocs)
    sites = sorted({s for k in kinds for s in allocs[k]},
                   key=lambda s: (-max(allocs[k].get(s, 0) for k in kinds), s))
    print('--- one event defined and enabled, to the byte (kmem and percpu events: slab '
          'objects and per-CPU memory, not vmalloc\'ed pages): bytes by call site')
    print(f'  {"call site":<32}' + ''.join(f'{k:>15}' for k in kinds))
    rows = []
    for site in sites:
        print(f'  {site:<32}' + ''.join(f'{allocs[k].get(site, 0) or "-":>15}'
                                         for k in kinds))
        rows += [[k, site, allocs[k][site]] for k in kinds if site in allocs[k]]
    totals = {k: sum(allocs[k].values()) for k in kinds}
    print(f'  {"total":<32}' + ''.join(f'{totals[k]:>15}' for k in kinds))
    rows += [[k, 'total', totals[k]] for k in kinds]
    met = alloc_met(allocs)
    ok = met is not False
    if met is not None:
        print(f'  {"met" if ok else "NOT met"}: one function event / one kprobe event, '
              f'object by object = {totals["fevent"]} / {totals["kprobe"]} bytes '
              f'(target: no more)')
    return ok, rows


def estimate(mode, v):
    return min(v) if DEFAULTS[mode][2] == 'min' else statistics.median(v)


def table(mode, runs):
    rows = []
    order = sorted(runs, key=lambda c: int(c.split('-')[0]))
    base = estimate(mode, runs[order[0]]) if order else 0
    ftr = None
    for c in order:
        if c.startswith('2-'):
            ftr = estimate(mode, runs[c]) - base
    for c in order:
        v = runs[c]
        med = statistics.median(v)
        spread = (max(v) - min(v)) / med if med else 0
        est = estimate(mode, v)
        over = est - base
        ratio = over / ftr if ftr and not c.startswith('1-') else None
        rows.append({'mode': mode, 'case': c, 'runs': len(v),
                     'median_ns': med, 'min_ns': min(v), 'max_ns': max(v),
                     'estimate': DEFAULTS[mode][2], 'estimate_ns': est,
                     'spread': spread, 'overhead_ns': over, 'ratio': ratio})
    return rows


def show(mode, rows):
    unit = 'ns' if mode == 'wall' else 'insns'
    est = DEFAULTS[mode][2]
    print(f'\n=== {mode}: per call, {rows[0]["runs"] if rows else 0} runs '
          f'({unit}; overhead = {est} of the case - {est} of case 1; '
          f'ratio = overhead / case 2 overhead)')
    print(f'{"case":<26}{"median":>10}{"min":>10}{"spread":>9}{"overhead":>10}{"ratio":>8}')
    for r in rows:
        ratio = f'{r["ratio"]:.2f}' if r['ratio'] is not None else '-'
        print(f'{r["case"]:<26}{r["median_ns"]:>10.1f}{r["min_ns"]:>10.1f}'
              f'{r["spread"]:>8.1%}{r["overhead_ns"]:>10.1f}{ratio:>8}')


def create_targets(arch, create):
    """Creation of 1000 events: each phase of function events at most half
    of kprobe events' (where kprobe events hook through ftrace too), and
    disabling them all under 3 s; enabling and disabling them with one
    write each at most 0.05 of enabling them one by one; a glob event
    over N functions enabled and disabled in at most N x 10 us each."""
    ok = True
    print('--- creation targets (icount)')
    for p in ('define', 'enable', 'disable', 'remove'):
        fe, kp = create.get(('fevent', p)), create.get(('kprobe', p))
        if not fe or not kp or not kp[1]:
            continue
        r = fe[1] / kp[1]
        if not arch.kprobes_on_ftrace:
            print(f'  shown: {p} fevent / kprobe = {r:.2f} (no target: '
                  f'kprobe events on {arch.name} are breakpoints, not '
                  f'ftrace hooks)')
            continue
        good = r <= 0.5
        ok &= good
        print(f'  {"met" if good else "NOT met"}: {p} fevent / kprobe = {r:.2f} '
              f'(target <= 0.50)')
    one, grp = create.get(('fevent', 'enable')), create.get(('fevent-group', 'enable'))
    if one and grp and one[1]:
        r = grp[1] / one[1]
        good = r <= 0.05
        ok &= good
        print(f'  {"met" if good else "NOT met"}: enable {grp[0]} function events '
              f'with one write / one by one = {grp[1]} / {one[1]} ms = {r:.3f} '
              f'(target <= 0.050)')
    for p in ('enable', 'disable'):
        g = create.get(('fevent-glob', p))
        if g:
            limit = g[0] * 0.01
            good = g[1] <= limit
            ok &= good
            print(f'  {"met" if good else "NOT met"}: {p} a glob event over {g[0]} '
                  f'functions = {g[1]} ms (target <= {limit:.0f})')
    fe = create.get(('fevent', 'disable'))
    if fe:
        good = fe[1] < 3000
        ok &= good
        print(f'  {"met" if good else "NOT met"}: disable {fe[0]} function events '
              f'= {fe[1]} ms (target < 3000)')
    return ok


# Each function event case, the case it is compared with, and the target
# of the ratio of their overheads: fprobe events where the kernel has
# them, else (arm64 6.12) kprobe and kretprobe events
VERSUS = {
    'fprobe': (('3', '6', 'no arguments', 0.95),
               ('4', '7', '3 ints', 0.95),
               ('5', '8', 'chain + string', 0.90),
               ('16', '17', 'exit: 3 ints + return', 0.95)),
    'kprobe': (('3', '9', 'no arguments', 0.95),
               ('4', '10', '3 ints', 0.95),
               ('5', '11', 'chain + string', 0.95),
               ('16', '18', 'exit: 3 ints + return', 0.70)),
}

# Against what the same record costs without a dynamic event around it:
# the function event case, the case, what, the target of the ratio (None:
# shown, no target).  Issue 44 asked for at most 1.20 times the function
# tracer as well: the floor itself costs 1.24 times the function tracer
# (662 against 536 instructions, x86_64), whose trace_function() writes
# the ring buffer directly, without the event file's checks, triggers and
# filter that every event's record goes through; the floor is the bound.
STATIC = (('3', '20', 'function event, no arguments / the floor '
           '(ftrace + an empty TRACE_EVENT())', 1.05),
          ('3', '2', 'function event, no arguments / the function tracer', None),
          ('20', '2', 'the floor / the function tracer', None),
          ('4', '13', 'function event, 3 ints / the TRACE_EVENT() of the 3 ints', 1.25),
          ('4', '20', 'function event, 3 ints / the floor', None))


def targets(mode, rows):
    over = {r['case'].split('-')[0]: r['overhead_ns'] for r in rows}
    ok = True
    out = []
    kind = 'fprobe' if '6' in over else 'kprobe'
    for fe, other, what, limit in VERSUS[kind]:
        if fe in over and other in over and over[other] > 0:
            r = over[fe] / over[other]
            good = r <= limit
            ok &= good
            out.append(f'{"met" if good else "NOT met"}: function event / {kind} '
                       f'({what}) = {r:.2f} (target <= {limit:.2f})')
    # One shared hook: a second event on the function costs its own
    # recording only, and events on other functions cost a hit nothing
    for case, what, limit in (('14', 'two events on the function', 2.05),
                              ('15', '1000 events on other functions', 1.05),
                              ('19', 'a glob event hooking others', 1.05)):
        if case in over and '4' in over and over['4'] > 0:
            r = over[case] / over['4']
            good = r <= limit
            ok &= good
            out.append(f'{"met" if good else "NOT met"}: 3 ints with {what} / '
                       f'3 ints = {r:.2f} (target <= {limit:.2f})')
    for fe, other, what, limit in STATIC:
        if fe in over and other in over and over[other] > 0:
            r = over[fe] / over[other]
            if limit is None:
                out.append(f'shown: {what} = {r:.2f} (no target)')
                continue
            good = r <= limit
            ok &= good
            out.append(f'{"met" if good else "NOT met"}: {what} = {r:.2f} '
                       f'(target <= {limit:.2f})')
    print(f'--- targets ({mode})')
    for s in out:
        print('  ' + s)
    return ok


def order_report(all_rows, tie=0.05):
    """Whether the wall-clock table orders the cases as icount does.

    A pair of cases is out of order when one costs less than the other
    under icount and more under wall.  A pair within @tie of each other
    under icount is a tie there: wall's order of it is noise, shown
    apart.  Returns the pairs out of order, as (cheaper under icount,
    dearer under icount, icount ratio, wall ratio)."""
    over = {m: {r['case']: r['overhead_ns'] for r in all_rows
                if r['mode'] == m and not r['case'].startswith('1-')}
            for m in ('icount', 'wall')}
    cases = [c for c in over['icount'] if c in over['wall']]
    if len(cases) < 2:
        return None
    cases.sort(key=lambda c: over['icount'][c])
    out, ties = [], 0
    for i, a in enumerate(cases):
        for b in cases[i + 1:]:
            ia, ib = over['icount'][a], over['icount'][b]
            wa, wb = over['wall'][a], over['wall'][b]
            if wa <= wb:
                continue
            if ia <= 0 or ib / ia <= 1 + tie:
                ties += 1
                continue
            out.append((a, b, ib / ia, wb / wa if wa > 0 else 0))
    print('--- wall against icount: the order of the cases by overhead')
    print('  icount: ' + ' < '.join(c.split('-')[0] for c in cases))
    wall = sorted(cases, key=lambda c: over['wall'][c])
    print('  wall:   ' + ' < '.join(c.split('-')[0] for c in wall))
    if not out:
        print(f'  the same order, but for {ties} pair{"" if ties == 1 else "s"} '
              f'within {tie:.0%} of each other under icount')
    for a, b, ri, rw in out:
        print(f'  out of order: {b} costs {ri:.2f} times {a} under icount, '
              f'{rw:.2f} times under wall')
    if out:
        print(f'  ({ties} more pair{"" if ties == 1 else "s"} within {tie:.0%} under '
              f'icount swap places: noise)')
    return out


def plot(arch, all_rows, path):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('(no matplotlib: no plot)')
        return
    modes = [m for m in MODES if any(r['mode'] == m for r in all_rows)]
    if not modes:
        return
    fig, axes = plt.subplots(1, len(modes), figsize=(7 * len(modes), 6),
                             squeeze=False)
    for ax, mode in zip(axes[0], modes):
        rows = [r for r in all_rows if r['mode'] == mode and
                not r['case'].startswith('1-')]
        names = [r['case'] for r in rows]
        vals = [r['overhead_ns'] for r in rows]
        # from the fastest to the slowest run
        errs = [[r['estimate_ns'] - r['min_ns'] for r in rows],
                [r['max_ns'] - r['estimate_ns'] for r in rows]]
        colors = ['tab:green' if '-fevent' in '-' + n.split('-', 1)[1] else
                  'tab:gray' for n in names]
        ax.barh(names, vals, xerr=errs, color=colors)
        base = next((r['estimate_ns'] for r in all_rows
                     if r['mode'] == mode and r['case'].startswith('1-')), 0)
        ax.plot([r['median_ns'] - base for r in rows], names, 'k.',
                label='median')
        ax.legend(title=f'bar: {DEFAULTS[mode][2]}; line: min to max',
                  loc='lower right')
        ax.invert_yaxis()
        ax.set_xlabel('overhead per call, ' +
                      ('ns (wall clock, TCG)' if mode == 'wall' else
                       'instructions (icount)'))
        ax.set_title(f'fevent_sample_bench(): {arch.name}, {mode}')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f'plot: {os.path.relpath(path, TOP)}')


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--obj', default=os.path.join(BUILD, 'obj-bench'))
    ap.add_argument('--calls', type=int,
                    help='calls per run (default: wall 50000, icount 200000)')
    ap.add_argument('--runs', type=int,
                    help='runs per case (default: wall 21, icount 5)')
    ap.add_argument('--create', type=int, default=1000)
    ap.add_argument('--modes', default='wall,icount')
    ap.add_argument('--cases', default='all',
                    help='comma-separated case numbers to run (1 and 2 are '
                    'always run: the ratios need them)')
    ap.add_argument('--timeout', type=int, default=3600)
    ap.add_argument('--parallel', action='store_true',
                    help='run the two guests at the same time')
    args = ap.parse_args()
    arch = arches.get()
    out = os.path.join(BUILD, 'bench' + suffix(arch))
    os.makedirs(out, exist_ok=True)
    os.makedirs(LOGS, exist_ok=True)
    os.environ['FBE_ACCEL'] = 'tcg'
    results = {}
    threads = [threading.Thread(target=run_guest,
                                args=(arch, m, args.obj, args, args.timeout, results))
               for m in args.modes.split(',')]
    start = time.time()
    # One after the other: a second guest on the other host CPU makes the
    # wall-clock numbers noisier still (--parallel to save time).
    for t in threads:
        t.start()
        if not args.parallel:
            t.join()
    for t in threads:
        t.join()
    all_rows, rc = [], 0
    creates, mems, allocs_rows = [], [], []
    for mode in args.modes.split(','):
        lines, status, logpath = results[mode]
        runs, create, mem, errors, skipped = parse(lines)
        for sk in skipped:
            print(f'{mode}: ' + sk)
        bad = bad_lines(lines)
        if bad or errors or not any(s.startswith('BENCH-DONE') for s in lines):
            rc = 1
            print(f'error: the {mode} run did not finish cleanly ({status}); '
                  f'log: {logpath}')
            for e in errors:
                print('  ' + e)
            show_tail(lines, bad[0] if bad else None)
        rows = table(mode, runs)
        all_rows += rows
        show(mode, rows)
        if create:
            print(f'--- creation ({mode}): ms for {next(iter(create.values()))[0]} events')
            for kind in ('fevent', 'kprobe'):
                phases = [create.get((kind, p), (0, 0))[1]
                          for p in ('define', 'enable', 'disable', 'remove')]
                print(f'  {kind:<8} define {phases[0]:>6}  enable {phases[1]:>6}  '
                      f'disable {phases[2]:>6}  remove {phases[3]:>6}')
                creates.append([mode, kind] + phases)
            if ('fevent', 'remove-all') in create:
                print(f'  fevent   removed at once (echo > function_events): '
                      f'{create[("fevent", "remove-all")][1]}')
            never = [create.get((kind, 'remove-never-enabled'), (0, 0))[1]
                     for kind in ('fevent', 'kprobe')]
            if any(never):
                # What "remove" costs beyond the buffer reset that both
                # kinds wait for when the event was ever enabled
                print(f'  removed never enabled (no buffer reset): fevent '
                      f'{never[0]}  kprobe {never[1]}')
            for row in creates[-2:]:
                row.append(create.get((row[1], 'remove-never-enabled'), (0, 0))[1])
                row.append(next(iter(create.values()))[0])
            # Many functions with one write: a group of single-function
            # events, and one event over a glob
            for kind in ('fevent-group', 'fevent-glob'):
                phases = [create.get((kind, p)) for p in
                          ('define', 'enable', 'disable', 'remove')]
                if not any(phases):
                    continue
                n = next(p[0] for p in phases if p)
                ms = [p[1] if p else 0 for p in phases]
                print(f'  {kind:<13} define {ms[0]:>6}  enable {ms[1]:>6}  '
                      f'disable {ms[2]:>6}  remove {ms[3]:>6}  ({n} functions, '
                      f'{"one write each phase" if kind == "fevent-group" else "one event"})')
                creates.append([mode, kind] + ms + [0, n])
            if mode == 'icount':
                ok_create = create_targets(arch, create)
                rc = rc if ok_create else 1
        if mem:
            ok_mem, rows_mem = mem_report(mem, alloc_met(parse_allocs(lines)))
            mems += [[mode] + r for r in rows_mem]
            if mode == 'icount' and not ok_mem:
                rc = 1
        allocs = parse_allocs(lines)
        if allocs:
            ok_allocs, rows_allocs = alloc_report(allocs)
            allocs_rows += [[mode] + r for r in rows_allocs]
            if mode == 'icount' and not ok_allocs:
                rc = 1
        # icount is deterministic: a target it misses fails make bench.
        # Wall clock under TCG is too noisy to fail on; it is shown.
        if not targets(mode, rows) and mode == 'icount':
            print('error: a per-hit target is not met under icount')
            rc = 1
    # Shown, not failed on: wall clock under TCG is noisy
    order_report(all_rows)
    with open(os.path.join(out, 'bench.csv'), 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=list(all_rows[0].keys()) if all_rows else ['mode'])
        w.writeheader()
        w.writerows(all_rows)
    with open(os.path.join(out, 'create.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['mode', 'kind', 'define_ms', 'enable_ms', 'disable_ms', 'remove_ms',
                    'remove_never_enabled_ms', 'functions'])
        w.writerows(creates)
    with open(os.path.join(out, 'mem.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['mode', 'kind', 'n', 'defined_kb', 'enabled_kb',
                    'defined_bytes_each', 'enabled_bytes_each'])
        w.writerows(mems)
    with open(os.path.join(out, 'alloc.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['mode', 'kind', 'call_site', 'bytes'])
        w.writerows(allocs_rows)
    plot(arch, all_rows, os.path.join(out, 'bench.png'))
    rel = os.path.relpath(out, TOP)
    print(f'csv: {rel}/bench.csv, {rel}/create.csv, {rel}/mem.csv, {rel}/alloc.csv; '
          f'{time.time() - start:.0f}s')
    return rc


if __name__ == '__main__':
    sys.exit(main())
