# SPDX-License-Identifier: GPL-2.0
"""Where things are: the repository, build/, the kernel tree, the logs and
the cache.  The bottom of the harness: it imports nothing of it."""

import os

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(TOP, 'build')
TREE = os.path.join(BUILD, 'linux')
LOGS = os.path.join(BUILD, 'logs')
CACHE = os.environ.get('FBE_CACHE') or os.path.join(
    os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'),
    'function-events')
