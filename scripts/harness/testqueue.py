#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The test queue: ftracetest cases handed to the guests as they ask.

Each guest of make check asks for its next cases over a second serial
port (a UNIX socket on the host); serve_queue() answers from one
TestQueue shared by all of them, longest cases first, so that the CPUs
finish together however long a case takes on the day.
"""

import os
import re
import threading
import time

from .initramfs import FTRACE, clients_needed


def read_test(t):
    """The text of test.d/t, or '' if there is no such file."""
    try:
        with open(os.path.join(FTRACE, 'test.d', t)) as f:
            return f.read()
    except OSError:
        return ''


class TestQueue:
    """The ftracetest cases of make check (paths in test.d), handed out
    to whichever guest asks first, longest first (weights: seconds each),
    a few at a time: a chunk holds about a third of what is left per CPU,
    or one case, so that the first chunks are single long cases, the
    last ones a few short ones (MIN_CHUNK), and the CPUs finish together
    however long a case takes on the day.  given[job] lists what each job
    was handed; clients tells whether a case needs perf or trace-cmd."""

    # Each ftracetest run costs 2 to 3 s of its own under TCG: the last
    # chunks are short tests worth about this many seconds together.
    MIN_CHUNK = 20

    def __init__(self, tests, weights, ncpus, deadline=None):
        self.w = {t: weights.get(t, 10) for t in tests}
        # time.time() after which nothing more is handed out (CI's budget)
        self.deadline = deadline
        self.expired = False
        # ftracetest runs a case with "# flags: instance" twice, the
        # second time in an instance: two results
        self.nres = {t: 1 + bool(re.search(r'^#.*flags:.*instance',
                                           read_test(t), re.M)) for t in tests}
        self.left = sorted(tests, key=lambda t: (-self.w[t], t))
        self.ncpus = max(1, ncpus)
        self.given = {}
        self.clients = clients_needed([os.path.join(FTRACE, 'test.d', t) for t in tests])
        self.lock = threading.Lock()
        # job: (time handed, its chunk); the chunks done: seconds, weight
        self.current = {}
        self.done_secs = self.done_weight = 0.0

    def speed(self):
        """How much slower than its weights this machine runs the cases,
        from the chunks done so far (1 until one is done, never less)."""
        with self.lock:
            if self.done_weight < 30:
                return 1.0
            return max(1.0, self.done_secs / self.done_weight)

    def stall(self, job, base):
        """How long job's guest may print nothing: base, or three times
        the longest case it runs now at this machine's speed if that is
        more.  A case that takes 130 s on the machine of the weights
        took 300 s on one twice as slow, and one that printed nothing
        for 900 s there was still running."""
        with self.lock:
            cur = self.current.get(job)
            longest = max((self.w[t] for t in cur[1]), default=0) if cur else 0
        return max(base, 3 * longest * self.speed())

    def take(self, job):
        with self.lock:
            if self.deadline is not None and time.time() > self.deadline:
                self.expired = True
                return []
            now = time.time()
            prev = self.current.pop(job, None)
            if prev:
                self.done_secs += now - prev[0]
                self.done_weight += sum(self.w[t] for t in prev[1])
            target = max(sum(self.w[t] for t in self.left) / (3 * self.ncpus),
                         self.MIN_CHUNK)
            chunk, load = [], 0
            while self.left and (not chunk or load + self.w[self.left[0]] <= target):
                chunk.append(self.left.pop(0))
                load += self.w[chunk[-1]]
            self.given.setdefault(job, []).extend(chunk)
            if chunk:
                self.current[job] = (now, chunk)
            return chunk

    def results(self, job):
        """How many results the cases handed to job report."""
        with self.lock:
            return sum(self.nres[t] for t in self.given.get(job, []))

    def __len__(self):
        with self.lock:
            return len(self.left)


def serve_queue(srv, queue, job, say):
    """Answer a guest's "next" on its second serial port with a line of
    test paths from queue, or "done".  Every QEMU that boot() starts for
    the job connects in turn (a KVM guest that does not come up is
    followed by a TCG one), so it serves one connection after another
    until run_job() closes srv."""
    while True:
        try:
            conn, _ = srv.accept()
        except OSError:
            return
        with conn, conn.makefile('rwb') as f:
            for raw in f:
                if raw.strip() != b'next':
                    continue
                chunk = queue.take(job)
                if chunk:
                    say(f'{job} takes {len(chunk)}: ' + ', '.join(chunk) +
                        f' ({len(queue)} left)')
                f.write((' '.join('/ftrace/test.d/' + t for t in chunk) or
                         'done').encode() + b'\n')
                f.flush()
