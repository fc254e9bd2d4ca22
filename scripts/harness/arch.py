#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One place per architecture: what the harness needs to know of each.

Everything that differs between the architectures make check runs on
is here: the kernel's ARCH and cross compiler, the image and where the
build leaves it, the config fragment, QEMU's program, machine, CPU and
console, how a guest reaches the host's test queue, and where the
guest's user space comes from.  The other modules ask an Arch, never
the architecture's name.

The architectures Debian has no user space of (make check-nolibc) are
in NOLIBC: their guest's init is one static program on the kernel's
nolibc, and make check does not run there.

  python3 -m harness.arch shell ARCH   the build's variables, for
                                      scripts/build.sh and scripts/deps.sh
  python3 -m harness.arch list         the architectures, one a line
"""

import os
import sys
from dataclasses import dataclass, field

from .paths import CACHE, TOP

DEFAULT = 'x86_64'


@dataclass(frozen=True)
class Arch:
    name: str               # make check ARCH=<name>
    karch: str              # the kernel's ARCH=
    cross: str              # CROSS_COMPILE=, '' for the host's
    target: str             # the make target of the image
    image: str              # where the build leaves it, under the object dir
    debian: str             # Debian's name of the architecture
    qemu: str               # the QEMU program
    machine: list           # -machine and what it needs
    console: str            # the guest's console device
    queue_tty: str          # the guest's end of the test queue
    # packages (Debian's, this architecture's) whose files make up the
    # guest's user space when the host's cannot run there: (package,
    # [paths in it])
    userland: tuple = field(default=())
    kvm: bool = False       # whether KVM can run it on an x86_64 host
    # the host's packages that build and boot it
    host_pkgs: tuple = field(default=())
    # the host compiler of static guest tools (guest/tools)
    cc: str = 'gcc'
    # make bench: the registers of the first four arguments, as kprobe
    # events name them, and the size of the instruction that calls
    # ftrace at a function's entry (an int3 or BRK probe goes after it)
    arg_regs: tuple = field(default=())
    ftrace_insn_len: int = 4
    # whether a kprobe at a function's entry is an ftrace hook, whose
    # enabling costs an ftrace update as a function event's does (else
    # a breakpoint, which costs none: make bench compares creation
    # times with kprobe events only where they pay the same)
    kprobes_on_ftrace: bool = False
    # QEMU's CPU under TCG, where "max" is not the one
    cpu: str = ''
    # make hitprofile: the gdb that steps the guest (Debian's package of
    # the same name), its name of the architecture, and the expression
    # of the return address at a function's first instruction
    gdb: str = 'gdb'
    gdb_arch: str = ''
    gdb_ret: str = ''

    @property
    def userland_root(self):
        """Where scripts/deps.sh unpacks the userland packages."""
        return os.path.join(CACHE, f'userland-{self.debian}')

    def user_file(self, path):
        """The guest's program or library at path (bin/dash): the host's
        own, or the unpacked package's."""
        if not self.userland:
            return '/' + path
        p = os.path.join(self.userland_root, path)
        if not os.path.exists(p):
            sys.exit(f'error: no {p}: make deps ARCH={self.name}')
        return p

    @property
    def config(self):
        """This architecture's config fragment."""
        return os.path.join(TOP, 'config', 'kconfig', f'{self.name}.config')

    def obj(self, build):
        """The object directory of make check's kernel."""
        return os.path.join(build, 'obj' if self.name == DEFAULT
                            else f'obj-{self.name}')

    def qemu_cmd(self, kernel, initrd, accel, cmdline, smp, mem):
        cpu = 'host' if accel == 'kvm' else self.tcg_cpu
        # Multi-threaded TCG races with the kernel's cross-CPU text
        # patching (ftrace, static keys): a breakpoint or a half-written
        # instruction left by the patching is seen after its handler is
        # gone.  Single-threaded TCG does not race.
        if accel == 'tcg':
            accel = 'tcg,thread=single'
        return [self.qemu, *self.machine, '-accel', accel, '-cpu', cpu,
                '-smp', str(smp), '-m', str(mem), '-kernel', kernel,
                '-initrd', initrd, '-append', cmdline,
                '-nographic', '-no-reboot', '-nic', 'none']

    @property
    def tcg_cpu(self):
        if self.cpu:
            return self.cpu
        # arm64: "max" emulates pointer authentication with QARMA, which
        # makes every function entry and return several times slower
        # under TCG; the cheap implementation-defined algorithm keeps the
        # feature (the kernel uses it) at a fraction of the cost.
        return 'max,pauth-impdef=on' if self.karch == 'arm64' else 'max'

    def queue_args(self, sock):
        """QEMU's arguments that connect the guest's queue_tty to the
        host's socket at sock."""
        if self.queue_tty == '/dev/ttyS1':
            # a second 8250; naming the console's port keeps it ttyS0
            return ['-chardev', f'socket,id=queue,path={sock}',
                    '-serial', 'mon:stdio', '-serial', 'chardev:queue']
        # virt has one PL011: the queue is a virtio console, /dev/hvc0
        return ['-chardev', f'socket,id=queue,path={sock}',
                '-device', 'virtio-serial-device',
                '-device', 'virtconsole,chardev=queue']


ARCHES = {
    'x86_64': Arch(
        name='x86_64', karch='x86', cross='', target='bzImage',
        image='arch/x86/boot/bzImage', debian='amd64',
        qemu='qemu-system-x86_64', machine=['-machine', 'q35'],
        console='ttyS0', queue_tty='/dev/ttyS1', kvm=True,
        host_pkgs=('qemu-system-x86',),
        arg_regs=('%di', '%si', '%dx', '%cx'), ftrace_insn_len=5,
        kprobes_on_ftrace=True,
        # the call pushed it
        gdb_arch='i386:x86-64', gdb_ret='*(unsigned long *)$sp'),
    'arm64': Arch(
        name='arm64', karch='arm64', cross='aarch64-linux-gnu-',
        target='Image', image='arch/arm64/boot/Image', debian='arm64',
        qemu='qemu-system-aarch64',
        # GICv3 (the kernel's pseudo-NMI and more than 8 CPUs need it)
        machine=['-machine', 'virt,gic-version=3'],
        console='ttyAMA0', queue_tty='/dev/hvc0',
        userland=(('busybox-static', ['bin/busybox']),
                  ('dash', ['bin/dash']),
                  ('libc6', ['lib/ld-linux-aarch64.so.1',
                             'lib/aarch64-linux-gnu/libc.so.6']),
                  # what ftracetest runs that busybox lacks (initramfs.py)
                  ('util-linux', ['usr/bin/chrt']),
                  ('coreutils', ['usr/bin/nice'])),
        cc='aarch64-linux-gnu-gcc',
        arg_regs=('%x0', '%x1', '%x2', '%x3'), ftrace_insn_len=4,
        # the link register; the host's gdb knows only x86_64
        gdb='gdb-multiarch', gdb_arch='aarch64', gdb_ret='$x30',
        host_pkgs=('gcc-aarch64-linux-gnu', 'libc6-dev-arm64-cross',
                   'qemu-system-arm')),
}


# Booted by make check-nolibc, with guest/nolibc/fevent-test.c as init:
# a 32-bit big-endian ABI that passes 64-bit arguments in register pairs
# that start at an even register, and a 64-bit one whose exit events run
# on fgraph with its ftrace_regs.  No queue: the init is the test.
NOLIBC = {
    'ppc32': Arch(
        name='ppc32', karch='powerpc', cross='powerpc-linux-gnu-',
        target='vmlinux', image='vmlinux', debian='powerpc',
        qemu='qemu-system-ppc', machine=['-machine', 'ppce500'],
        cpu='e500mc', console='ttyS0', queue_tty='',
        host_pkgs=('gcc-powerpc-linux-gnu', 'qemu-system-ppc'),
        cc='powerpc-linux-gnu-gcc',
        arg_regs=tuple(f'%r{n}' for n in range(3, 11))),
    'riscv64': Arch(
        name='riscv64', karch='riscv', cross='riscv64-linux-gnu-',
        target='Image', image='arch/riscv/boot/Image', debian='riscv64',
        qemu='qemu-system-riscv64',
        # OpenSBI, from Debian's opensbi package
        machine=['-machine', 'virt', '-bios', 'default'],
        cpu='rv64',     # QEMU 7.2 has no riscv "max"
        console='ttyS0', queue_tty='',
        host_pkgs=('gcc-riscv64-linux-gnu', 'qemu-system-misc', 'opensbi'),
        cc='riscv64-linux-gnu-gcc',
        arg_regs=tuple(f'%a{n}' for n in range(8)), ftrace_insn_len=8),
}


@dataclass(frozen=True)
class Target:
    """A kernel make check-arches compiles the series' files for (W=1),
    with what the series must select there."""
    name: str
    karch: str
    cross: str
    pkg: str                # Debian's package of its compiler
    fevents: bool           # FUNCTION_EVENTS is on there
    fexit: bool             # FUNCTION_EXIT_EVENTS is on there
    bits: tuple = ()        # the options that select the word size


def _target(a, pkg, fevents, fexit, bits=()):
    return Target(a.name, a.karch, a.cross, pkg, fevents, fexit, bits)


# make check-arches: the architectures above, and three that are only
# compiled: i386 (no DYNAMIC_FTRACE_WITH_ARGS: no function events),
# s390x (no registers at fgraph's entry: no exit events) and riscv32 (a
# 32-bit ABI with 64-bit arguments in two registers).
TARGETS = {
    'x86_64': _target(ARCHES['x86_64'], 'gcc', True, True, ('CONFIG_64BIT=y',)),
    'i386': Target('i386', 'i386', '', 'gcc', False, False),
    'arm64': _target(ARCHES['arm64'], 'gcc-aarch64-linux-gnu', True, True,
                     ('CONFIG_64BIT=y',)),
    'riscv64': _target(NOLIBC['riscv64'], 'gcc-riscv64-linux-gnu', True, True,
                       ('CONFIG_64BIT=y',)),
    's390x': Target('s390x', 's390', 's390x-linux-gnu-', 'gcc-s390x-linux-gnu',
                    True, False, ('CONFIG_64BIT=y',)),
    # RV32I depends on NONPORTABLE since 6.8: without it, riscv32 is
    # riscv64 again
    'riscv32': Target('riscv32', 'riscv', 'riscv64-linux-gnu-',
                      'gcc-riscv64-linux-gnu', True, True,
                      ('CONFIG_NONPORTABLE=y', 'CONFIG_ARCH_RV32I=y')),
    'ppc32': _target(NOLIBC['ppc32'], 'gcc-powerpc-linux-gnu', True, False,
                     ('CONFIG_PPC32=y',)),
}


def get_nolibc(name):
    """The NOLIBC Arch of name; exits on an unknown one."""
    if name not in NOLIBC:
        sys.exit(f'error: {name}: make check-nolibc knows {", ".join(NOLIBC)}')
    return NOLIBC[name]


def get(name=None):
    """The Arch of name (default: $ARCH, else x86_64); exits on an
    unknown one."""
    name = name or os.environ.get('ARCH') or DEFAULT
    # the kernel's own names of the same
    name = {'x86': 'x86_64', 'aarch64': 'arm64'}.get(name, name)
    if name not in ARCHES:
        sys.exit(f'error: ARCH={name}: make check knows {", ".join(ARCHES)}')
    return ARCHES[name]


def main(argv):
    if len(argv) == 3 and argv[1] == 'shell':
        a = get(argv[2])
        build = os.path.join(TOP, 'build')
        for k, v in (('ARCH_NAME', a.name), ('KARCH', a.karch),
                     ('HOST_PKGS', ' '.join(a.host_pkgs)),
                     ('USER_PKGS', ' '.join(p for p, _ in a.userland)),
                     ('USER_ROOT', a.userland_root if a.userland else ''),
                     ('CROSS', a.cross), ('KTARGET', a.target),
                     ('KIMAGE', a.image), ('ARCH_CONFIG', a.config),
                     ('ARCH_OBJ', a.obj(build)), ('DEBIAN_ARCH', a.debian),
                     ('GDB', a.gdb)):
            print(f"{k}='{v}'")
        return 0
    if len(argv) == 2 and argv[1] == 'list':
        print('\n'.join(ARCHES))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
