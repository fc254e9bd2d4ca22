#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Refresh config/lists/test-weights from the build/logs/test-times-* files of a
make check run: seconds per ftracetest case (an "(instance)" run added to
its case), the guest boot, and the boot and fuzz jobs.

  weights.py [LOGS]     LOGS: build/logs by default
"""
import collections
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TD = os.path.join(TOP, 'build/linux/tools/testing/selftests/ftrace/test.d')


def main():
    logs = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, 'build/logs')
    by_desc = collections.defaultdict(list)
    for d, _, fs in os.walk(TD):
        for f in sorted(fs):
            if f.endswith('.tc'):
                path = os.path.join(d, f)
                m = re.search(r'^# description: (.*)$', open(path).read(), re.M)
                if m:
                    by_desc[m.group(1).strip()].append(os.path.relpath(path, TD))
    # Cases that share a description (ftrace/fgraph-filter.tc and
    # ftrace/fgraph-multi.tc) are told apart by the order of their paths
    # only, not by the order they ran in: check their figures by hand
    # (the 191 s fgraph-filter.tc had were most likely fgraph-multi.tc's).
    for v in by_desc.values():
        v.sort()
    w, guest = collections.defaultdict(float), []
    for job in ('ftrace0', 'ftrace1', 'ftrace2', 'ftrace3', 'boot', 'fuzz'):
        p = os.path.join(logs, f'test-times-{job}')
        if not os.path.exists(p):
            continue
        used = collections.defaultdict(int)
        last = {}
        total = 0.0
        for line in open(p):
            secs, _, desc = line.strip().partition(' ')
            secs = float(secs)
            if desc == '@guest':
                guest.append(secs)
                continue
            # check.py adds the stress run's own budget to the boot job
            if not desc.startswith('stress'):
                total += secs
            if not job.startswith('ftrace'):
                continue
            inst = desc.startswith('(instance) ')
            desc = desc[len('(instance) '):] if inst else desc
            paths = by_desc.get(desc)
            if not paths:
                continue
            if inst:
                w[last.get(desc, paths[0])] += secs
            else:
                path = paths[min(used[desc], len(paths) - 1)]
                used[desc] += 1
                last[desc] = path
                w[path] += secs
        if job in ('boot', 'fuzz'):
            w['@' + job] = total
    if guest:
        w['@guest'] = max(guest)
    out = os.path.join(TOP, 'config/lists/test-weights')
    head = [l for l in open(out) if l.startswith('#')]
    with open(out, 'w') as f:
        f.writelines(head)
        for k in sorted(w, key=lambda k: (not k.startswith('@'), k)):
            f.write(f'{k} {max(1, round(w[k]))}\n')
    print(f'{out}: {len(w)} weights from {logs}')


if __name__ == '__main__':
    main()
