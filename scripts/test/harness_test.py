#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The harness's own test: no kernel, a few seconds.

As tools/testing/kunit/kunit_tool_test.py is to kunit_tool: a unittest
module, one TestCase per module of the harness (scripts/harness/):

  VerdictTest    verdict.py: canned guest consoles (test_data/*.log), one
                 per way a run can go wrong; each must give a failing
                 verdict naming the cause, and a clean console must pass
  TestQueueTest  testqueue.py: the test queue and its socket
  ArchTest       arch.py: each architecture's QEMU command and queue, the
                 kernel's names of them, make check-arches' targets
  InitramfsTest  initramfs.py: each architecture's archive (its busybox,
                 /bin/sh and queue device, read back out of the cpio) and
                 the refusal of test paths that name nothing; skipped,
                 with the reason, without build/linux or the
                 architecture's unpacked user space (make tree, make deps)
  ResultsTest    results.py: records written and read back, added up,
                 reported, and the CI budget
  KconfigTest    kconfig.py: the options the fragments ask for, and the
                 ones a .config lost
  BenchTest      bench.py's targets: each ratio met or not met at its limit;
                 wall's order of the cases against icount's
  HitprofileTest hitprofile.py: each architecture's gdb command, and the
                 gdb script on a made-up guest: the shortest whole call
                 kept, a stop elsewhere or at the limit never

  harness_test.py [--record] [unittest's arguments]
      all tests, or those named (VerdictTest, VerdictTest.test_kasan_report_fails);
      unittest's output, then "N passed, N failed" (", N skipped" if
      any were); with --record, the counts go to the result channel as
      the record "selftest" (results.py); exit 1 if any failed

From scripts/test, python3 -m unittest harness_test runs them too.
Part of make check and make check-harness.
"""

import gzip
import io
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import arch  # noqa: E402
from harness import initramfs  # noqa: E402
from harness import kconfig  # noqa: E402
from harness import results  # noqa: E402
from harness import testqueue  # noqa: E402
from harness import verdict  # noqa: E402
import bench  # noqa: E402
import hitprofile  # noqa: E402

TEST_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'test_data')


def test_data_path(name):
    return os.path.join(TEST_DATA, name)


def console(name):
    """The lines of the canned console test_data/name, as boot.py hands
    them to verdict.judge(): escape sequences kept, newlines not."""
    with open(test_data_path(name), encoding='utf-8', newline='') as f:
        lines = f.read().split('\n')
    return lines[:-1] if lines[-1] == '' else lines


def replace(lines, old, new):
    """lines with the line old replaced by the lines new."""
    i = lines.index(old)
    return lines[:i] + new + lines[i + 1:]


class VerdictTest(unittest.TestCase):
    """verdict.judge() on canned consoles: the clean ones pass, and every
    way a run can go wrong fails it, naming the cause."""

    def judge(self, name, status='', **kw):
        return verdict.judge(console(name), status, **kw)

    @staticmethod
    def said(v):
        """What a verdict says against the run: its problems and the
        results that did not pass."""
        return ' '.join(v.problems + [f'{n} {r} {c}' for n, r, c in v.results
                                      if r not in ('PASS', 'XFAIL', 'SKIP')])

    def assertFailsNaming(self, name, must, status=''):
        v = self.judge(name, status)
        text = self.said(v)
        self.assertFalse(v.ok, f'{name} passed: {text!r}')
        self.assertGreater(v.nfail, 0, text)
        self.assertIn(must, text)

    def assertQueuedFailsNaming(self, name, handed, must):
        v = self.judge(name, handed=handed)
        text = ' '.join(v.problems)
        self.assertFalse(v.ok, f'{name} with {handed} handed passed')
        self.assertIn(must, text)

    # What passes

    def test_clean_console_passes(self):
        v = self.judge('clean_ftracetest.log')
        self.assertEqual(v.problems, [])
        self.assertTrue(v.ok)
        self.assertEqual((v.npass, v.nskip), (3, 1))

    def test_init_found_without_escape_sequences(self):
        v = self.judge('init_without_escapes.log')
        self.assertTrue(v.ok, v.problems)

    def test_unsigned_module_alone_passes(self):
        v = self.judge('unsigned_module_taint.log')      # FBE-TAINT 8192 (E)
        self.assertTrue(v.ok, v.problems)

    def assertPassesShowingKnown(self, name, marker):
        """The console passes, and its one report with marker is shown
        as a known one."""
        lines = console(name)
        report = next(s for s in lines if marker in s)
        v = verdict.judge(lines)
        self.assertTrue(v.ok, v.problems)
        self.assertEqual(v.known, [report.strip()])

    def test_known_warn_taints_and_passes_and_is_shown(self):
        self.assertPassesShowingKnown('known_warn_taint.log', 'disarm_kprobe_ftrace')

    def test_known_report_passes_and_is_shown(self):
        self.assertPassesShowingKnown('known_unwinder_report.log', 'return_to_handler')

    # What fails, and names why

    def test_failing_test_fails(self):
        self.assertFailsNaming('failing_test.log', 'Function event - add and remove')

    def test_unresolved_test_fails(self):
        self.assertFailsNaming('unresolved_test.log', 'UNRESOLVED')

    def test_not_ok_with_skip_directive_fails(self):
        self.assertFailsNaming('not_ok_skip.log', 'stress')

    def test_guest_crashed_mid_test_fails(self):
        self.assertFailsNaming('crashed_mid_test.log', 'did not finish', 'qemu exited (0)')

    def test_guest_hung_mid_test_fails(self):
        self.assertFailsNaming('hung_mid_test.log', 'no output', 'no output for 900s')

    def test_missing_ftracetest_summary_fails(self):
        self.assertFailsNaming('missing_summary.log', 'summary')

    def test_shard_that_never_started_fails(self):
        self.assertEqual(console('never_started.log'), [])
        self.assertFailsNaming('never_started.log', 'never reached init', 'qemu exited (1)')

    def test_shard_stopped_at_firmware_fails(self):
        self.assertFailsNaming('stopped_at_firmware.log', 'never reached init',
                               'no output for 900s')

    def test_fewer_results_than_planned_fails(self):
        self.assertFailsNaming('fewer_results_than_planned.log', 'plans announce 4')

    def test_failing_boot_test_fails(self):
        self.assertFailsNaming('failing_boot_test.log', 'boot: the boot-time')

    def test_kmemleak_report_fails(self):
        self.assertFailsNaming('kmemleak_report.log', 'kmemleak')

    def test_failed_modprobe_fails(self):
        self.assertFailsNaming('failed_modprobe.log', 'modprobe')

    def test_kasan_report_fails(self):
        self.assertFailsNaming('kasan_report.log', 'KASAN')

    def test_warning_in_passing_test_fails(self):
        self.assertFailsNaming('warning_in_passing_test.log', 'WARNING')

    def test_unknown_unwinder_warning_fails(self):
        self.assertFailsNaming('unknown_unwinder_warning.log', 'wrong direction')

    def test_lockdep_in_skipped_test_fails(self):
        self.assertFailsNaming('lockdep_in_skipped_test.log', 'circular')

    def test_lockdep_only_in_dmesg_fails(self):
        self.assertFailsNaming('lockdep_only_in_dmesg.log', 'recursive locking')

    def test_report_after_last_test_fails(self):
        self.assertFailsNaming('report_after_last_test.log', 'sleeping')

    def test_tainted_kernel_fails(self):
        self.assertFailsNaming('tainted_warning.log', 'tainted: 512 (W)')

    def test_unsigned_module_and_warning_taint_fails(self):
        self.assertFailsNaming('tainted_unsigned_and_warning.log', 'tainted: 8704 (WE)')

    def test_no_taint_report_fails(self):
        self.assertFailsNaming('no_taint_report.log', 'taint')

    def test_known_warn_beside_unknown_one_fails(self):
        self.assertFailsNaming('known_and_unknown_warn.log', 'fevent_hook')

    def test_no_dmesg_dump_fails(self):
        self.assertFailsNaming('no_dmesg_dump.log', 'dmesg')

    def test_dmesg_dump_cut_short_fails(self):
        self.assertFailsNaming('dmesg_cut_short.log', 'dmesg')

    def test_guest_rc_without_failed_result_fails(self):
        self.assertFailsNaming('guest_rc_without_failure.log', 'rc=1')

    # A guest fed from the queue: two ftracetest runs of 2 cases, then 1

    def test_queued_guest_that_ran_what_it_took_passes(self):
        v = self.judge('queued_guest.log', handed=3)
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.npass, v.nskip), (3, 1))

    def test_queued_case_that_never_reported_fails(self):
        self.assertQueuedFailsNaming('queued_guest.log', 4, 'for 4 results')

    def test_queued_guest_without_last_summary_fails(self):
        self.assertQueuedFailsNaming('queued_missing_last_summary.log', 3, 'for 3 results')

    def test_queued_guest_crashed_in_second_run_fails(self):
        self.assertQueuedFailsNaming('queued_crashed_second_run.log', 3, 'did not finish')

    # make check-nolibc's console: its init prints no ftracetest summary

    def test_nolibc_console_passes_without_summary(self):
        v = verdict.judge(console('nolibc_console.log'), 'done', ftracetest=False)
        self.assertTrue(v.ok, v.problems)
        self.assertEqual((v.npass, v.nskip), (1, 1))

    def test_nolibc_failing_case_fails(self):
        lines = replace(console('nolibc_console.log'), 'ok 1 the sample module loads',
                        ['not ok 1 the sample module loads'])
        v = verdict.judge(lines, 'done', ftracetest=False)
        self.assertFalse(v.ok)
        self.assertIn('the sample module loads FAIL', self.said(v))


class TestQueueTest(unittest.TestCase):
    """testqueue.TestQueue and serve_queue()."""

    def test_hands_out_every_case_once_longest_first(self):
        w = {'a': 400, 'b': 300, 'c': 100, 'd': 10, 'e': 10, 'f': 10, 'g': 5}
        q = testqueue.TestQueue(list(w), w, 2)
        chunks = []
        while True:
            c = q.take(f'ftrace{len(chunks) % 2}')
            if not c:
                break
            chunks.append(c)
        self.assertEqual(sorted(t for c in chunks for t in c), sorted(w))
        self.assertEqual(chunks[0], ['a'])
        self.assertLessEqual(len(chunks[-1]), 2, chunks)
        self.assertEqual(sum(map(len, q.given.values())), len(w))

    def test_stall_limit_scales_with_running_case_and_speed(self):
        q = testqueue.TestQueue(['long', 'a', 'b'], {'long': 400, 'a': 20, 'b': 20}, 1)
        self.assertEqual(q.take('j'), ['long'])
        q.current['j'] = (q.current['j'][0] - 800, q.current['j'][1])   # took 800 s
        self.assertEqual(q.stall('j', 900), 1200)       # 3 x 400 at speed 1
        q.take('j')                                     # 'long' done: speed 2
        self.assertAlmostEqual(q.speed(), 2, delta=0.01)
        self.assertEqual(q.stall('j', 900), 900)        # 3 x 20 x 2 < 900

    def test_past_deadline_hands_out_nothing_and_says_so(self):
        q = testqueue.TestQueue(['a', 'b'], {'a': 1, 'b': 1}, 1, deadline=0)
        self.assertEqual(q.take('ftrace0'), [])
        self.assertTrue(q.expired)
        self.assertEqual(len(q), 2)

    def test_answers_the_qemu_that_replaces_a_failed_one(self):
        # A QEMU that goes away (a KVM guest that did not come up) leaves
        # the queue to the next one boot() starts for the job
        sockdir = tempfile.mkdtemp(prefix='fbe-harness-test-')
        self.addCleanup(shutil.rmtree, sockdir)
        path = os.path.join(sockdir, 'queue')
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(srv.close)
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
            said = second.makefile('rb').readline().decode().strip()
        self.assertEqual(said, '/ftrace/test.d/a')


class ArchTest(unittest.TestCase):
    """arch.py.  The checks of each architecture are methods of their own,
    test_<check>_<arch>, made below the class for every entry of
    arch.ARCHES and arch.NOLIBC."""

    def check_boots_under_single_threaded_tcg(self, a):
        cmd = a.qemu_cmd('/k/' + a.image, '/i', 'tcg', f'console={a.console}', 2, 2048)
        self.assertEqual(cmd[0], a.qemu)
        self.assertTrue(cmd[cmd.index('-kernel') + 1].endswith(a.image), cmd)
        self.assertIn('tcg,thread=single', cmd)
        self.assertEqual(cmd[cmd.index('-machine') + 1], a.machine[1])

    def check_connects_the_queue_to_its_tty(self, a):
        q = ' '.join(a.queue_args('/s'))
        want = ('chardev:queue' if a.queue_tty.startswith('/dev/ttyS')
                else 'virtconsole,chardev=queue')
        self.assertIn(want, q)
        self.assertIn('socket,id=queue,path=/s', q)

    def check_nolibc_boots_its_image_and_make_check_does_not_take_it(self, a):
        cmd = a.qemu_cmd('/k/' + a.image, '/i', 'tcg', f'console={a.console}', 1, 512)
        self.assertEqual(cmd[0], a.qemu)
        self.assertTrue(cmd[cmd.index('-kernel') + 1].endswith(a.image), cmd)
        self.assertEqual(cmd[cmd.index('-cpu') + 1], a.cpu or 'max')
        self.assertEqual(cmd[cmd.index('-machine') + 1], a.machine[1])
        self.assertNotIn(a.name, arch.ARCHES)
        self.assertTrue(os.path.exists(a.config), a.config)

    def test_kernel_names_are_known(self):
        self.assertEqual(arch.get('aarch64').name, 'arm64')
        self.assertEqual(arch.get('x86').name, 'x86_64')

    def test_unknown_arch_is_refused(self):
        with self.assertRaises(SystemExit):
            arch.get('pdp11')

    def test_targets_agree_with_arches_and_nolibc(self):
        both = 0
        for name, t in arch.TARGETS.items():
            a = arch.ARCHES.get(name) or arch.NOLIBC.get(name)
            if a is None:
                continue
            both += 1
            self.assertEqual((t.karch, t.cross), (a.karch, a.cross), name)
        # x86_64, arm64, riscv64, ppc32 at least: the check checked some
        self.assertGreaterEqual(both, 4)

    def test_riscv32_selects_a_32_bit_kernel(self):
        bits = arch.TARGETS['riscv32'].bits
        self.assertIn('CONFIG_ARCH_RV32I=y', bits)
        # RV32I depends on NONPORTABLE: without it, riscv32 is riscv64
        self.assertIn('CONFIG_NONPORTABLE=y', bits)
        self.assertNotIn('CONFIG_64BIT=y', bits)


def _per_arch(cls, check, arches):
    for name, a in arches.items():
        setattr(cls, f'test_{check}_{name}',
                lambda self, a=a: getattr(self, 'check_' + check)(a))


_per_arch(ArchTest, 'boots_under_single_threaded_tcg', arch.ARCHES)
_per_arch(ArchTest, 'connects_the_queue_to_its_tty', arch.ARCHES)
_per_arch(ArchTest, 'nolibc_boots_its_image_and_make_check_does_not_take_it', arch.NOLIBC)


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


class InitramfsTest(unittest.TestCase):
    """initramfs.py, on the ftracetest of build/linux.  The archive of each
    architecture is a method of its own, test_archive_<arch>."""

    def need_tree(self):
        if not os.path.isdir(initramfs.FTRACE):
            self.skipTest(f'no {initramfs.FTRACE}: make tree')

    def base_archive(self, a):
        """The base initramfs of architecture a, read back: {name: (mode, data)}."""
        if a.userland and not os.path.isdir(a.userland_root):
            self.skipTest(f'no {a.userland_root}: make deps ARCH={a.name}')
        self.need_tree()
        tmp = tempfile.mkdtemp(prefix='fbe-harness-test-')
        self.addCleanup(shutil.rmtree, tmp)
        out = os.path.join(tmp, 'base.cpio.gz')
        try:
            initramfs.make_base_initramfs(a, os.path.join(tmp, 'no-obj'), out)
        except SystemExit as e:         # what it needs is not installed
            self.skipTest(str(e))
        return read_cpio_gz(out)

    def check_archive(self, a):
        """Its own busybox and /bin/sh, and the queue device."""
        files = self.base_archive(a)
        bb = files.get('bin/busybox', (0, b''))[1]
        sh = files.get('bin/sh', (0, b''))[1]
        tty = files.get('fbe/queue-tty', (0, b''))[1].decode().strip()
        self.assertEqual(elf_machine(bb), ELF_MACHINE[a.name], 'bin/busybox')
        self.assertEqual(elf_machine(sh), ELF_MACHINE[a.name], 'bin/sh')
        self.assertEqual(tty, a.queue_tty)
        self.assertIn('init', files)
        self.assertIn('ftrace/ftracetest', files)

    def test_missing_tests_refuses_paths_that_name_nothing(self):
        self.need_tree()
        td = os.path.join(initramfs.FTRACE, 'test.d')
        known = next((os.path.relpath(os.path.join(d, f), td) for d, _, fs in os.walk(td)
                      for f in sorted(fs) if f.endswith('.tc')), None)
        self.assertIsNotNone(known, f'no .tc file in {td}')
        bad = ['test.d/dynevent/fevent_btf.tc', '/nonexistent/x.tc']
        here = os.path.abspath(__file__)
        self.assertEqual(initramfs.missing_tests([here, 'none', known] + bad), bad)


for _name, _a in arch.ARCHES.items():
    setattr(InitramfsTest, f'test_archive_{_name}',
            lambda self, a=_a: self.check_archive(a))


class ResultsTest(unittest.TestCase):
    """results.py: the result channel."""

    ENV = {'FBE_RUN': 'run-1', 'FBE_STEP': 'make check'}

    def setUp(self):
        tmp = tempfile.mkdtemp(prefix='fbe-harness-test-')
        self.addCleanup(shutil.rmtree, tmp)
        self.path = os.path.join(tmp, 'results.jsonl')

    # add_up()

    def test_add_up_counts_of_a_step(self):
        recs = [{'step': 'make check', 'name': 'guests/ftrace0', 'passed': 3, 'failed': 1},
                {'step': 'make check', 'name': 'guests/fault', 'passed': 2, 'skipped': 1},
                {'step': 'make check', 'name': 'make check', 'rc': 1, 'seconds': 9}]
        self.assertEqual(results.add_up(recs), (5, 1, 1))

    def test_add_up_step_that_counted_nothing_passes_by_rc(self):
        recs = [{'step': 'make check-docs', 'name': 'make check-docs', 'rc': 0}]
        self.assertEqual(results.add_up(recs), (1, 0, 0))

    def test_add_up_step_that_counted_nothing_fails_by_rc(self):
        recs = [{'step': 'make check-docs', 'name': 'make check-docs', 'rc': 2},
                # a phase of the time accounting counts nothing either
                {'step': 'make check-docs', 'name': 'render', 'seconds': 5}]
        self.assertEqual(results.add_up(recs), (0, 1, 0))

    def test_add_up_nonzero_rc_with_nothing_failed_is_one_failure_more(self):
        recs = [{'step': 's', 'name': 'a', 'passed': 4, 'failed': 0},
                {'step': 's', 'name': 's', 'rc': 1}]
        self.assertEqual(results.add_up(recs), (4, 1, 0))

    def test_add_up_nonzero_rc_with_a_failure_counts_it_once(self):
        recs = [{'step': 's', 'name': 'a', 'passed': 4, 'failed': 2},
                {'step': 's', 'name': 's', 'rc': 1}]
        self.assertEqual(results.add_up(recs), (4, 2, 0))

    def test_add_up_skipped_steps(self):
        arm64 = 'make check ARCH=arm64 ONLY=ci'
        recs = [# the budget left it out: results.py fits, never run
                {'step': 'make check-arches', 'name': 'make check-arches', 'skipped': 1,
                 'reason': '100 s left of CI_BUDGET=4500, it needs about 500 s'},
                # left out inside its runner, which exits 0: skipped, not passed
                {'step': arm64, 'name': arm64, 'skipped': 1, 'reason': 'budget'},
                {'step': arm64, 'name': arm64, 'rc': 0, 'seconds': 3},
                {'step': 'make check', 'name': 'selftest', 'passed': 2, 'skipped': 3}]
        self.assertEqual(results.add_up(recs), (2, 0, 5))

    def test_add_up_step_leaves_out_other_steps(self):
        recs = [{'step': 'a', 'name': 'x', 'passed': 1},
                {'step': 'a', 'name': 'a', 'rc': 0},
                {'step': 'b', 'name': 'y', 'failed': 2, 'skipped': 1},
                {'step': 'b', 'name': 'b', 'rc': 1},
                {'step': 'c', 'name': 'c', 'rc': 3}]
        self.assertEqual(results.add_up(recs, step='a'), (1, 0, 0))
        self.assertEqual(results.add_up(recs, step='b'), (0, 2, 1))
        self.assertEqual(results.add_up(recs, step='c'), (0, 1, 0))
        self.assertEqual(results.add_up(recs), (1, 3, 1))

    # fits()

    def fits(self, seconds, recs=(), now=1400):
        # 1000 s budget, 100 s reserve, 400 s gone: 500 s left
        env = {'CI_BUDGET': '1000', 'CI_RESERVE': '100', 'FBE_CI_START': '1000'}
        with mock.patch.dict(os.environ, env):
            return results.fits('make check-arches', seconds, list(recs), now=now)

    def test_fits_a_step_that_fits(self):
        self.assertEqual(self.fits(500), (True, ''))
        self.assertEqual(self.fits(100), (True, ''))

    def test_fits_refuses_a_step_that_does_not(self):
        ok, why = self.fits(501)
        self.assertFalse(ok)
        self.assertIn('500 s left of CI_BUDGET=1000', why)
        self.assertIn('needs about 501 s', why)
        self.assertFalse(self.fits(100, now=1900)[0])       # 0 s left

    def test_fits_speed_from_latest_guests_record(self):
        recs = [{'name': 'guests', 'seconds': 800},
                {'name': 'guests-arm64', 'seconds': 8000},
                {'name': 'guests', 'seconds': 1600},        # twice as slow
                {'name': 'guests', 'passed': 3}]            # no seconds
        self.assertEqual(self.fits(250, recs), (True, ''))
        ok, why = self.fits(251, recs)
        self.assertFalse(ok)
        self.assertIn('needs about 502 s', why)

    def test_fits_speed_never_below_1(self):
        recs = [{'name': 'guests', 'seconds': 200}]         # four times as fast
        self.assertEqual(self.fits(500, recs), (True, ''))
        self.assertFalse(self.fits(501, recs)[0])

    # record(), load(), report()

    def test_record_load_round_trip(self):
        with mock.patch.dict(os.environ, self.ENV):
            a = results.record('selftest', path=self.path, passed=3, failed=1, skipped=0,
                               arch=None)
            b = results.record('guests', path=self.path, seconds=12.5, part=True)
            with mock.patch.dict(os.environ, {'FBE_RUN': 'run-2'}):
                c = results.record('other', path=self.path, rc=1)
        self.assertNotIn('arch', a)
        self.assertEqual((a['run'], a['step'], a['name']), ('run-1', 'make check', 'selftest'))
        self.assertEqual(results.load(path=self.path), [a, b, c])
        self.assertEqual(results.load(path=self.path, run='run-1'), [a, b])
        self.assertEqual(results.load(path=self.path + '.none'), [])

    def test_report_ends_with_the_sum(self):
        recs = [{'step': 's', 'name': 'guests/ftrace0', 'passed': 3, 'failed': 1,
                 'problems': ['ftracetest: x failed']},
                {'step': 's', 'name': 'nolibc/ppc32', 'skipped': 2, 'reason': 'no compiler'},
                {'step': 's', 'name': 'guests', 'seconds': 30},
                {'step': 's', 'name': 's', 'rc': 1, 'seconds': 40}]
        out = io.StringIO()
        self.assertEqual(results.report(recs, out=out), 1)
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[-1], '3 passed, 1 failed, 2 skipped')
        self.assertIn('FAILED guests/ftrace0: 3 passed, 1 failed', lines)
        self.assertIn('  ftracetest: x failed', lines)
        self.assertIn('skipped nolibc/ppc32: no compiler', lines)


class KconfigTest(unittest.TestCase):
    """kconfig.py's pure functions: wanted() and lost()."""

    def test_wanted_later_fragment_overrides_earlier(self):
        want = kconfig.wanted(['CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\n',
                               'CONFIG_A=n\n# a comment\nCONFIG_C=y\nCONFIG_D="x y"\n'])
        self.assertEqual(want, {'CONFIG_A': 'n', 'CONFIG_B': 'm', 'CONFIG_C': 'y',
                                'CONFIG_D': '"x y"'})

    def test_wanted_is_not_set(self):
        want = kconfig.wanted(['CONFIG_A=y\n', '# CONFIG_A is not set\n  CONFIG_B=y  \n'])
        self.assertEqual(want, {'CONFIG_A': None, 'CONFIG_B': 'y'})

    def test_lost_absent_option(self):
        self.assertEqual(kconfig.lost({'CONFIG_A': 'y'}, 'CONFIG_B=y\n'),
                         ['CONFIG_A=y requested, got: absent'])

    def test_lost_option_with_another_value(self):
        self.assertEqual(kconfig.lost({'CONFIG_A': 'y'}, 'CONFIG_A=m\n'),
                         ['CONFIG_A=y requested, got: CONFIG_A=m'])

    def test_lost_option_that_should_be_off_is_on(self):
        self.assertEqual(kconfig.lost({'CONFIG_A': None}, 'CONFIG_A=y\n'),
                         ['CONFIG_A should be off, got: CONFIG_A=y'])

    def test_lost_none(self):
        want = {'CONFIG_A': 'y', 'CONFIG_B': None, 'CONFIG_C': None, 'CONFIG_D': '"x"'}
        config = 'CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_D="x"\nCONFIG_E=y\n'
        self.assertEqual(kconfig.lost(want, config), [])


class BenchTest(unittest.TestCase):
    """bench.targets(): the ratios issue 44 sets, on made-up overheads."""

    # overhead per case, fprobe events present: every target met
    MET = {'2': 500, '3': 560, '4': 700, '5': 1400, '6': 700, '7': 800,
           '8': 1600, '13': 600, '14': 1300, '15': 700, '16': 1200,
           '17': 1300, '19': 700, '20': 540}

    def run_targets(self, over):
        rows = [{'case': f'{c}-x', 'overhead_ns': v} for c, v in over.items()]
        out = io.StringIO()
        with mock.patch('sys.stdout', out):
            ok = bench.targets('icount', rows)
        return ok, out.getvalue()

    def test_all_met(self):
        ok, text = self.run_targets(self.MET)
        self.assertTrue(ok, text)
        self.assertNotIn('NOT met', text)
        self.assertIn('the floor (ftrace + an empty TRACE_EVENT()) = 1.04', text)

    def test_function_tracer_ratio_is_shown_not_a_target(self):
        # the floor itself is above 1.20 times the function tracer
        ok, text = self.run_targets(dict(self.MET, **{'2': 400}))
        self.assertTrue(ok, text)
        self.assertIn('shown: function event, no arguments / the function tracer '
                      '= 1.40 (no target)', text)

    def test_each_static_ratio_can_fail(self):
        for case, value, what in (('20', 530, 'the floor'),
                                  ('13', 550, 'the TRACE_EVENT() of the 3 ints')):
            over = dict(self.MET, **{case: value})
            ok, text = self.run_targets(over)
            self.assertFalse(ok, text)
            self.assertRegex(text, r'NOT met: function event, .*' + re.escape(what))

    def run_mem(self, lines, exact=None):
        mem = bench.parse(lines)[2]
        out = io.StringIO()
        with mock.patch('sys.stdout', out):
            ok, rows = bench.mem_report(mem, exact)
        return ok, rows, out.getvalue()

    def test_memory_per_event(self):
        # 1000 events: 900 kB and 1200 kB enabled; a pattern over 2048
        # functions: 64 kB enabled, 32 bytes a function
        lines = ['MEM fevent 1000 500 900 16', 'MEM kprobe 1000 800 1200 16',
                 'MEM fevent-glob 2048 8 64 16', 'MEM fexit-glob 2048 8 512 16']
        ok, rows, text = self.run_mem(lines)
        self.assertTrue(ok, text)
        self.assertIn('fevent       defined      512  enabled      922', text)
        self.assertIn('an enabled event over a pattern = 32 bytes a function', text)
        self.assertIn(['fexit-glob', 2048, 8, 512, 4, 256], rows)

    def test_memory_rounds_are_averaged(self):
        # Two rounds a kind (fevent kprobe kprobe fevent): each kind's
        # figure is their mean, 1,000 and 1,075 bytes, not its last round;
        # with one round of fevent (1,126 bytes) the target is not met
        lines = ['MEM fevent 1000 500 1100 16', 'MEM kprobe 1000 800 1200 16',
                 'MEM kprobe 1000 800 900 16', 'MEM fevent 1000 500 853 16']
        ok, rows, text = self.run_mem(lines)
        self.assertTrue(ok, text)
        self.assertIn(['fevent', 2000, 1000, 1953, 512, 1000], rows)
        self.assertIn('met: an enabled function event / kprobe event = 1000 / 1075 bytes', text)
        ok, _, text = self.run_mem(lines[:3])
        self.assertFalse(ok, text)
        self.assertIn('NOT met: an enabled function event / kprobe event = 1126 / 1075', text)

    def test_memory_within_resolution(self):
        # 10 kB over 1,000 events: 10 bytes an event, under the 16 a
        # reading settling within 16 kB tells apart; 17 kB is over it
        # is left to the object-by-object figure of the same run
        within = ['MEM fevent 1000 500 1210 16', 'MEM kprobe 1000 800 1200 16']
        ok, _, text = self.run_mem(within, exact=True)
        self.assertTrue(ok, text)
        self.assertIn('within what /proc/meminfo tells apart (16 bytes an event), object '
                      'by object met: an enabled function event / kprobe event '
                      '= 1239 / 1229', text)
        for exact, what in ((False, 'object by object NOT met'),
                            (None, 'object by object not counted: NOT met')):
            ok, _, text = self.run_mem(within, exact=exact)
            self.assertFalse(ok, text)
            self.assertIn(what, text)
        over = ['MEM fevent 1000 500 1217 16', 'MEM kprobe 1000 800 1200 16']
        ok, _, text = self.run_mem(over)
        self.assertFalse(ok, text)
        self.assertIn('NOT met: an enabled function event / kprobe event = 1246 / 1229', text)
        # The resolution is what the guest's MEM lines say, not a constant
        # of the host's: readings settling within 32 kB leave 17 kB within
        ok, _, text = self.run_mem([s[:-2] + '32' for s in over], exact=True)
        self.assertTrue(ok, text)
        self.assertIn('within what /proc/meminfo tells apart (33 bytes an event)', text)

    def test_memory_targets_can_fail(self):
        for lines, what in ((['MEM fevent 1000 500 1300 16', 'MEM kprobe 1000 800 1200 16'],
                             'NOT met: an enabled function event / kprobe event'),
                            (['MEM fevent-glob 1000 8 64 16'],
                             'NOT met: an enabled event over a pattern = 66')):
            ok, _, text = self.run_mem(lines)
            self.assertFalse(ok, text)
            self.assertIn(what, text)

    def run_allocs_awk(self, awk):
        prog = os.path.join(os.path.dirname(TEST_DATA), '../../guest/allocs.awk')
        out = subprocess.run(awk + ['-v', 'kind=fevent', '-f', prog,
                                    os.path.join(TEST_DATA, 'kmem_trace.txt')],
                             check=True, capture_output=True, text=True).stdout
        return sorted(out.splitlines())

    def test_allocs_awk(self):
        # In the window: kept, freed, left out (dentry, inode); before it
        # and freed in it by an RCU callback (the replaced hash): against
        # its site; a free of what was never seen: nothing
        want = ['ALLOC fevent __trace_fevent_create 192',
                'ALLOC fevent alloc_and_copy_ftrace_hash 32',
                'ALLOC fevent alloc_trace_kprobe 16',
                'ALLOC fevent trace_define_field 56']
        awks = [['awk']] + ([['busybox', 'awk']] if shutil.which('busybox') else [])
        for awk in awks:
            self.assertEqual(self.run_allocs_awk(awk), want, awk)

    def test_alloc_report(self):
        lines = ['ALLOC fevent trace_define_field 112', 'ALLOC kprobe trace_define_field 56',
                 'ALLOC kprobe alloc_trace_kprobe 304', 'MEM fevent 1000 500 900 16']
        allocs = bench.parse_allocs(lines)
        out = io.StringIO()
        with mock.patch('sys.stdout', out):
            ok, rows = bench.alloc_report(allocs)
        text = out.getvalue()
        self.assertTrue(ok, text)
        self.assertRegex(text, r'alloc_trace_kprobe +- +304\n')
        self.assertRegex(text, r'total +112 +360\n')
        self.assertIn('met: one function event / one kprobe event, object by object '
                      '= 112 / 360 bytes', text)
        self.assertIn(['kprobe', 'total', 360], rows)
        self.assertIn(['fevent', 'trace_define_field', 112], rows)
        # one byte more than the kprobe event: not met
        allocs = bench.parse_allocs(lines + ['ALLOC fevent __trace_fevent_create 249'])
        with mock.patch('sys.stdout', io.StringIO()) as out:
            ok, _ = bench.alloc_report(allocs)
        self.assertFalse(ok)
        self.assertIn('NOT met: one function event / one kprobe event, object by object '
                      '= 361 / 360 bytes', out.getvalue())

    def run_order(self, icount, wall):
        rows = [{'mode': m, 'case': c, 'overhead_ns': v}
                for m, over in (('icount', icount), ('wall', wall))
                for c, v in over.items()]
        out = io.StringIO()
        with mock.patch('sys.stdout', out):
            pairs = bench.order_report(rows)
        return pairs, out.getvalue()

    def test_wall_order_against_icount(self):
        icount = {'1-none': 0, '2-ftr': 500, '3-fe': 700, '4-fe3': 710, '13-te': 600}
        # the same order: 3 and 4, 1.4% apart under icount, may swap
        pairs, text = self.run_order(icount, {'1-none': 0, '2-ftr': 300, '3-fe': 460,
                                              '4-fe3': 450, '13-te': 350})
        self.assertEqual(pairs, [])
        self.assertIn('the same order, but for 1 pair within 5%', text)
        self.assertIn('icount: 2 < 13 < 3 < 4', text)
        # 13 dearer than 3 under wall: out of order
        pairs, text = self.run_order(icount, {'1-none': 0, '2-ftr': 300, '3-fe': 460,
                                              '4-fe3': 470, '13-te': 500})
        self.assertEqual([(a, b) for a, b, _, _ in pairs], [('13-te', '3-fe'), ('13-te', '4-fe3')])
        self.assertIn('out of order: 3-fe costs 1.17 times 13-te under icount, 0.92 times '
                      'under wall', text)
        # no wall run: nothing to compare
        self.assertIsNone(self.run_order(icount, {})[0])

    def test_exit_against_kretprobe_without_fprobe(self):
        over = {k: v for k, v in self.MET.items() if k not in ('6', '7', '8', '17')}
        over.update({'9': 700, '10': 800, '11': 1600, '18': 1800})
        ok, text = self.run_targets(over)
        self.assertTrue(ok, text)
        ok, text = self.run_targets(dict(over, **{'18': 1600}))
        self.assertFalse(ok, text)
        self.assertIn('NOT met: function event / kprobe (exit: 3 ints + return) = 0.75 '
                      '(target <= 0.70)', text)


class FakeGdb:
    """gdb's module as hitprofile's script sees it, stepping made-up
    calls: each a list of (pc, sp) or (pc, sp, return address), the last
    one its return.  A continue after a temporary breakpoint goes on to
    it in the same call, else to the next call."""

    def __init__(self, calls, ret):
        self.calls, self.ret = iter(calls), ret
        self.steps, self.i, self.tbreak = [], 0, None

    def execute(self, cmd, to_string=False):
        if cmd.startswith('thbreak *'):
            self.tbreak = int(cmd.split('*')[1])
        elif cmd == 'continue' and self.tbreak is not None:
            self.i = [s[0] for s in self.steps].index(self.tbreak, self.i)
            self.tbreak = None
        elif cmd == 'continue':
            self.steps, self.i = next(self.calls), 0
        elif cmd == 'stepi':
            self.i += 1

    def parse_and_eval(self, expr):
        step = self.steps[self.i]
        ret = step[2] if len(step) > 2 else self.ret
        return {'$pc': step[0], '$sp': step[1]}.get(expr, ret)


class HitprofileTest(unittest.TestCase):
    """hitprofile.py: the gdb that steps each architecture, and which of
    the calls it steps is the profile."""

    ADDR, RET, SP = 0x1000, 0x2000, 0x8000

    def call(self, n, start=ADDR, ret_sp=SP):
        """n instructions from start, whose first is at the entry's stack
        pointer and the others deeper, then the return"""
        return ([(start + 4 * i, self.SP if i == 0 else self.SP - 16)
                 for i in range(n)] + [(self.RET, ret_sp)])

    def step(self, calls, limit=100, skip=()):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        out, script = os.path.join(d, 'pcs'), os.path.join(d, 'script.py')
        hitprofile.gdb_cmd(arch.get('x86_64'), 1, hex(self.ADDR), out, limit,
                           script, calls=len(calls), skip=skip)
        with open(script) as f:
            text = f.read()
        fake = FakeGdb(calls, self.RET)
        printed = io.StringIO()
        with mock.patch.dict(sys.modules, {'gdb': fake}), \
                mock.patch('sys.stdout', printed):
            exec(compile(text, script, 'exec'), {})
        with open(out) as f:
            return [int(x, 16) for x in f.read().split()], printed.getvalue()

    def check_steps_with_its_gdb(self, a):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        script = os.path.join(d, 's.py')
        cmd = hitprofile.gdb_cmd(a, 1234, '0x10', os.path.join(d, 'o'), 5, script)
        self.assertEqual(cmd[0], a.gdb)
        self.assertIn(f'set architecture {a.gdb_arch}', cmd)
        self.assertTrue(a.gdb_arch and a.gdb_ret, a.name)
        with open(script) as f:
            text = f.read()
        self.assertIn(repr(a.gdb_ret), text)
        self.assertIn('target remote :1234', text)

    def test_keeps_the_shortest_whole_call(self):
        pcs, printed = self.step([self.call(30), self.call(7), self.call(9)])
        self.assertEqual(pcs, [self.ADDR + 4 * i for i in range(7)])
        self.assertIn('call 1: 7 instructions from 1000\n', printed)

    def test_return_of_arm64_keeps_the_stack_pointer(self):
        # x86_64 pops the return address, arm64 returns with sp as it was
        pcs, _ = self.step([self.call(5, ret_sp=self.SP + 8)])
        self.assertEqual(len(pcs), 5)
        pcs, _ = self.step([self.call(5, ret_sp=self.SP)])
        self.assertEqual(len(pcs), 5)

    def test_runs_through_the_scheduler(self):
        sched, back = 0x5000, self.ADDR + 8
        call = (self.call(2)[:2] + [(sched, self.SP - 32, back)] +
                [(sched + 4 * i, self.SP - 64) for i in range(1, 40)] +
                [(back, self.SP - 16), (self.RET, self.SP)])
        pcs, printed = self.step([call], skip=[sched])
        self.assertEqual(pcs, [self.ADDR, self.ADDR + 4, back])
        self.assertIn('the scheduler run through 1 times', printed)
        # stepped through, it is in the trace
        pcs, _ = self.step([call])
        self.assertEqual(len(pcs), 43)

    def test_stop_elsewhere_or_at_the_limit_is_no_call(self):
        pcs, printed = self.step([self.call(3, start=0x3000), self.call(200),
                                  self.call(12)])
        self.assertEqual(len(pcs), 12)
        self.assertEqual(printed.count('not a whole call'), 2, printed)
        pcs, _ = self.step([self.call(3, start=0x3000)])
        self.assertEqual(pcs, [])


_per_arch(HitprofileTest, 'steps_with_its_gdb', arch.ARCHES)

def main(argv):
    record = '--record' in argv[1:]
    argv = [a for a in argv if a != '--record']
    prog = unittest.main(module='__main__', argv=argv, exit=False)
    r = prog.result
    failed = len(r.failures) + len(r.errors) + len(r.unexpectedSuccesses)
    skipped = len(r.skipped)
    passed = max(0, r.testsRun - failed - skipped)
    sys.stderr.flush()
    print(f'{passed} passed, {failed} failed' + (f', {skipped} skipped' if skipped else ''),
          flush=True)
    if record:
        results.record('selftest', passed=passed, failed=failed, skipped=skipped)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
