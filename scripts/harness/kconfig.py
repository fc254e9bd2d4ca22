#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The one configure step of every kernel the harness builds.

make check's and make bench's kernels (scripts/build.sh), make
check-arches' and make check-nolibc's all go through configure():
tinyconfig, the fragments merged in order (merge_config.sh: a later one
overrides an earlier one), olddefconfig, then every option the fragments
ask for checked against the .config: one that did not survive is a
problem, named, not a kernel built without it.

  kconfig.py --karch ARCH [--cross PREFIX] [--cc CC] --obj DIR [--keep] [--no-check] FRAGMENT...
      configure DIR, print the options that did not survive; exit 1 if
      any did (with --no-check: print them, exit 0: check-bisect builds
      patches that come before the options they add); with --keep,
      only olddefconfig on the .config DIR has, then the check
"""

import argparse
import os
import re
import subprocess
import sys

from .paths import TREE

WANT = re.compile(r'^(CONFIG_\w+)=(.*)$|^# (CONFIG_\w+) is not set$')


def wanted(texts):
    """{option: value or None for "is not set"} the fragments ask for,
    a later fragment overriding an earlier one."""
    want = {}
    for text in texts:
        for line in text.splitlines():
            m = WANT.match(line.strip())
            if m and m.group(1):
                want[m.group(1)] = m.group(2)
            elif m:
                want[m.group(3)] = None
    return want


def lost(want, config):
    """The options of want that config (a .config's text) does not have
    as asked: ["CONFIG_X=y requested, got: ..."]."""
    have = {}
    for line in config.splitlines():
        m = WANT.match(line.strip())
        if m and m.group(1):
            have[m.group(1)] = m.group(2)
    out = []
    for opt, val in want.items():
        if val is None:
            if opt in have:
                out.append(f'{opt} should be off, got: {opt}={have[opt]}')
        elif have.get(opt) != val:
            got = f'{opt}={have[opt]}' if opt in have else 'absent'
            out.append(f'{opt}={val} requested, got: {got}')
    return out


def configure(karch, obj, fragments, cross='', cc=None, tree=TREE, keep=False):
    """Configure obj from tinyconfig and fragments (paths, in order), or
    with keep, bring its .config up to date (olddefconfig) as it is.
    Returns the options that did not survive (empty when all did)."""
    os.makedirs(obj, exist_ok=True)
    make = ['make', '-s', '-C', tree, f'O={obj}', f'ARCH={karch}',
            f'CROSS_COMPILE={cross}', 'LOCALVERSION=']
    if cc:
        make.append(f'CC={cc}')
    quiet = dict(check=True, stdout=subprocess.DEVNULL)
    if not keep:
        subprocess.run(make + ['tinyconfig'], **quiet)
        subprocess.run([os.path.join(tree, 'scripts/kconfig/merge_config.sh'), '-m',
                        '-O', obj, os.path.join(obj, '.config'), *fragments], **quiet)
    subprocess.run(make + ['olddefconfig'], **quiet)
    texts = []
    for f in fragments:
        with open(f) as fh:
            texts.append(fh.read())
    with open(os.path.join(obj, '.config')) as fh:
        return lost(wanted(texts), fh.read())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--karch', required=True)
    ap.add_argument('--cross', default='')
    ap.add_argument('--cc')
    ap.add_argument('--obj', required=True)
    ap.add_argument('--no-check', action='store_true')
    ap.add_argument('--keep', action='store_true',
                    help='olddefconfig on the .config there, then the check')
    ap.add_argument('fragments', nargs='+')
    a = ap.parse_args(argv)
    try:
        bad = configure(a.karch, os.path.abspath(a.obj), a.fragments, a.cross, a.cc,
                        keep=a.keep)
    except subprocess.CalledProcessError as e:
        print(f'kconfig: {" ".join(e.cmd[:3])}... failed ({e.returncode})', file=sys.stderr)
        return 1
    for b in bad:
        print(f'kconfig: {b}', file=sys.stderr)
    return 1 if bad and not a.no_check else 0


if __name__ == '__main__':
    sys.exit(main())
