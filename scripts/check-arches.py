#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check-arches: the series' C files built with W=1 for every
architecture Debian has a cross compiler for (scripts/harness/arch.py's TARGETS),
each on a tracing config with and without BTF.

A warning or an error in a file the series changes fails it; so does an
architecture where FUNCTION_EVENTS or FUNCTION_EXIT_EVENTS, or its
absence, is not what Kconfig should give (i386 has no
DYNAMIC_FTRACE_WITH_ARGS: no function events, and the rest of the
tracing code still builds; exit events exist where the function graph
entry passes the argument registers, HAVE_FUNCTION_GRAPH_ENTRY_FREGS:
not on s390 and powerpc; loongarch, which Debian 12 has no compiler for,
does not select it either).  The configs are one result on the result
channel (scripts/harness/results.py), its problems naming the configs
that failed.

  [ARCHES="arm64 riscv64"] check-arches.py
"""

import os
import re
import subprocess
import sys
import tempfile

from harness import arch as arches
from harness import kconfig
from harness import results
from harness.paths import BUILD, CACHE, LOGS, TOP, TREE

DIRS = ['kernel/trace/', 'samples/trace_events/']
OPTIONAL = ('CONFIG_FUNCTION_GRAPH_TRACER=', 'CONFIG_FUNCTION_GRAPH_RETVAL=',
            'CONFIG_FUNCTION_EVENTS=', 'CONFIG_SAMPLE_FUNCTION_EVENTS=')
OPTIONS = ['FTRACE', 'FUNCTION_TRACER', 'FUNCTION_GRAPH_TRACER', 'DYNAMIC_FTRACE',
           'KPROBES', 'KPROBE_EVENTS', 'PERF_EVENTS', 'DEBUG_FS', 'BPF_SYSCALL',
           'FUNCTION_EVENTS', 'SAMPLES']


def fragment(t, btf):
    """The tracing config of target t."""
    lines = ['CONFIG_SMP=y', 'CONFIG_MODULES=y', *t.bits]
    lines += [f'CONFIG_{o}=y' for o in OPTIONS]
    lines += ['CONFIG_SAMPLE_TRACE_EVENTS=m', 'CONFIG_SAMPLE_FUNCTION_EVENTS=m',
              'CONFIG_FUNCTION_GRAPH_RETVAL=y']
    if btf:
        lines += ['CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y',
                  'CONFIG_DEBUG_INFO_BTF=y', 'CONFIG_PROBE_EVENTS_BTF_ARGS=y']
    return '\n'.join(lines) + '\n'


def check(t, btf, series, jobs):
    """Configure and build target t: [problems]."""
    name = f'{t.name} btf={"y" if btf else "n"}'
    obj = os.path.join(BUILD, 'obj-arches', f'{t.name}-btf{"y" if btf else "n"}')
    log = os.path.join(LOGS, f'arches-{t.name}-btf{"y" if btf else "n"}.log')
    cc = f'ccache {t.cross}gcc'
    with tempfile.NamedTemporaryFile('w', suffix='.config') as frag:
        frag.write(fragment(t, btf))
        frag.flush()
        try:
            lost = kconfig.configure(t.karch, obj, [frag.name], t.cross, cc)
        except subprocess.CalledProcessError as e:
            return [f'{name}: config failed: {e}']
    config = open(os.path.join(obj, '.config')).read()
    problems = []
    # Asked for everywhere, there only where the architecture has them
    # (i386: no fgraph retval, so no function events; powerpc: no fgraph
    # retval): FUNCTION_EVENTS and FUNCTION_EXIT_EVENTS are checked
    # against what Kconfig should give below.  Every other option lost
    # is a config that is not the one meant (riscv32 built as riscv64).
    problems += [f'{name}: {p}' for p in lost if not p.startswith(OPTIONAL)]
    got = {o: bool(re.search(rf'^CONFIG_{o}=y$', config, re.M))
           for o in ('FUNCTION_EVENTS', 'FUNCTION_EXIT_EVENTS')}
    for o, want in (('FUNCTION_EVENTS', t.fevents), ('FUNCTION_EXIT_EVENTS', t.fexit)):
        if got[o] != want:
            problems.append(f'{name}: {o}={"y" if got[o] else "n"}, expected '
                            f'{"y" if want else "n"}')
    with open(log, 'w') as f:
        rc = subprocess.run(['make', '-s', '-C', TREE, f'O={obj}', f'ARCH={t.karch}',
                             f'CROSS_COMPILE={t.cross}', f'CC={cc}', 'LOCALVERSION=',
                             f'-j{jobs}', 'W=1', *DIRS],
                            stdout=f, stderr=subprocess.STDOUT).returncode
    text = open(log).read()
    if rc:
        errors = [s for s in text.splitlines() if 'error' in s][:5]
        return problems + [f'{name}: the build failed (log: {os.path.relpath(log, TOP)})'] + errors
    warned = [s for s in text.splitlines()
              if any(re.search(rf'(^|/){re.escape(f)}:\d+:\d+: (warning|error):', s)
                     for f in series)]
    if warned:
        problems += [f'{name}: a warning in a file the series changes'] + warned
    print(f'check-arches: {name}: FUNCTION_EVENTS={"y" if got["FUNCTION_EVENTS"] else "n"} '
          f'FUNCTION_EXIT_EVENTS={"y" if got["FUNCTION_EXIT_EVENTS"] else "n"}, '
          f'{" ".join(DIRS)} built with W=1'
          + ('' if warned else ", no warning in the series' files"), flush=True)
    return problems


def main():
    names = os.environ.get('ARCHES', ' '.join(arches.TARGETS)).split()
    unknown = [n for n in names if n not in arches.TARGETS]
    if unknown:
        sys.exit(f'error: ARCHES: no {" ".join(unknown)} in scripts/harness/arch.py TARGETS')
    targets = [arches.TARGETS[n] for n in names]
    if not os.path.isdir(os.path.join(TREE, '.git')):
        sys.exit('error: no build/linux (make tree)')
    subprocess.run([os.path.join(TOP, 'scripts/deps.sh'),
                    *sorted({t.pkg for t in targets})], check=True)
    os.environ.setdefault('CCACHE_DIR', os.path.join(CACHE, 'ccache'))
    os.environ.update(CCACHE_BASEDIR=TOP, CCACHE_NOHASHDIR='1')
    os.makedirs(LOGS, exist_ok=True)
    series = subprocess.run(['git', '-C', TREE, 'diff', '--name-only', 'base..HEAD',
                             '--', '*.c', '*.h'], capture_output=True, text=True,
                            check=True).stdout.split()
    jobs = int(os.environ.get('JOBS') or os.cpu_count())
    bad, problems = 0, []
    for t in targets:
        for btf in (True, False):
            found = check(t, btf, series, jobs)
            for p in found:
                print(p, file=sys.stderr)
            problems += found
            bad += bool(found)
    # one check, as make check-arches has always counted: its problems
    # name the configs
    results.record('check-arches', passed=int(not bad), failed=int(bool(bad)),
                   problems=problems or None)
    if bad:
        print(f'check-arches: {bad} of {2 * len(targets)} configs failed', file=sys.stderr)
        return 1
    print(f'check-arches: {2 * len(targets)} configs, no warning in the series\' files')
    return 0


if __name__ == '__main__':
    sys.exit(main())
