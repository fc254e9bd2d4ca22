# Function-based events for Linux 6.12: the patch series and its harness.
# See README.md.  The main targets:
#   make check    build the patched kernel, boot it in QEMU, run ftracetest
#   make run      boot it: a shell on a terminal, else a short demo
SHELL := /bin/bash
TESTS ?=
KCMDLINE ?=
SLOW ?=
export TESTS KCMDLINE SLOW
# make check ARCH=arm64: the architecture (scripts/harness/arch.py); unset, x86_64.
# Not exported empty: the kernel's own make takes an empty ARCH literally.
ifdef ARCH
export ARCH
endif
# make fuzz N=... SEED=...
N ?= 100000
SEED ?=

.PHONY: all check run deps base tree build export check-export \
	check-patches check-bisect check-debug fuzz check-docs docs-png bench check-arches \
	bench-build hitprofile check-nolibc check-harness format-patch clean distclean help

all: check

help:
	@printf '%s\n' \
	  'make check           build the kernel, boot it under QEMU, run every guest job: "N passed, N failed, N skipped"' \
	  'make run             boot it: a shell in /sys/kernel/tracing on a terminal, else guest/demo and its trace' \
	  'make deps            install the Debian packages the harness needs (apt-get, as root)' \
	  'make base            download, verify and unpack linux-source-6.12 into ~/.cache/function-events' \
	  'make tree            expand patches/ into build/linux (tag base + one commit per patch)' \
	  'make build           build the kernel in build/obj (ccache; the kernel cache skips an unchanged one)' \
	  'make export          write the commits base..HEAD of build/linux back into patches/' \
	  'make check-export    fail when patches/ and build/linux differ' \
	  'make format-patch    each series of patches/sets as mail in build/outgoing/N-NAME/ (SETS="fixes fgraph")' \
	  'make check-patches   checkpatch.pl --strict on every patch' \
	  'make check-bisect    build the kernel at every patch (build/obj-bisect)' \
	  'make check-sets      each series of patches/sets at its end: built on x86_64 and arm64, its selftests in one boot (SETS=)' \
	  'make check-debug     the same as make check (one kernel, with the debug checks in it)' \
	  'make fuzz            only the fuzzer, for long runs: N=100000 SEED=1 (a new seed unless given)' \
	  'make check-docs      Sphinx on Documentation/trace, kernel-doc -Wall on the C files the series changes' \
	  "make docs-png        render the new documents' HTML pages to build/docs-png/*.png" \
	  'make bench           the overhead benchmark on the -O2 kernel: build/bench/{bench,create,mem,alloc}.csv, bench.png' \
	  'make bench-build     build only the benchmarked -O2 kernel (build/obj-bench)' \
	  'make hitprofile      one hit of each bench case single-stepped: instructions per function (CASES=, DIFF=)' \
	  'make check-arches    the C files the series changes, W=1, on 7 architectures, with and without BTF' \
	  'make check-nolibc    boot powerpc32 and riscv64 kernels with a nolibc init that checks function events' \
	  "make check-harness   lint the harness's shell and Python and run its self-test (scripts/test/harness_test.py)" \
	  'make clean           remove build/obj*, build/logs and the initramfs archives (keeps build/linux)' \
	  'make distclean       remove build/ (keeps ~/.cache/function-events)' \
	  'make help            print this list'

deps:
	@t0=$$(date +%s) && scripts/deps.sh && echo "=== phase deps: $$(( $$(date +%s) - t0 ))s"

base: deps
	@scripts/fetch-base.sh >/dev/null

tree: base
	@t0=$$(date +%s) && scripts/tree.sh && \
	 PYTHONPATH=scripts python3 -m harness.results add tree --seconds $$(( $$(date +%s) - t0 )) && \
	 echo "=== phase tree: $$(( $$(date +%s) - t0 ))s"

build: tree
	@scripts/build.sh

check: build
	@scripts/check.sh

run: build
	@python3 scripts/qemu.py run --kcmdline "$(KCMDLINE)"

export:
	@scripts/export.sh

format-patch:
	@SETS="$(SETS)" scripts/format-series.sh

# The checks of the old debug kernel are part of make check now: one kernel.
check-debug: check

fuzz: build
	@ONLY=fuzz FUZZ_N=$(N) FUZZ_KN=$$(( $(N) / 10 )) FUZZ_SEED=$(or $(SEED),$$(date +%s)) \
		scripts/check.sh

check-docs: tree
	@scripts/check-docs.sh

docs-png: check-docs
	@scripts/docs-png.sh

# The benchmarked kernel: base.config at -O2 (config/kconfig/bench.config), one
# object directory per architecture
BENCH_OBJ = build/obj-bench$(if $(filter-out x86_64,$(ARCH)),-$(ARCH))
bench-build: tree
	@PHASE=build-bench scripts/build.sh $(BENCH_OBJ) config/kconfig/base.config config/kconfig/bench.config

bench: bench-build
	@scripts/deps.sh python3-matplotlib
	@/usr/bin/python3 scripts/bench.py --obj $(BENCH_OBJ) $(if $(MODES),--modes $(MODES))

# make hitprofile CASES=2,3 DIFF=2,3: one hit single-stepped, per function
CASES ?= 2,3,6
DIFF ?=
hitprofile: bench-build
	@scripts/deps.sh gdb
	@/usr/bin/python3 scripts/hitprofile.py --obj $(BENCH_OBJ) --cases $(CASES) $(if $(DIFF),--diff $(DIFF))

# The series' files with W=1 on x86_64, i386, arm64, riscv64, s390x,
# riscv32 and powerpc32
check-arches: tree
	@scripts/check-arches.sh

# Function events where Debian has no user space (scripts/harness/arch.py's
# NOLIBC): a 32-bit powerpc kernel (64-bit arguments in register pairs)
# and a riscv64 one (exit events on fgraph), with and without BTF, each
# booted with a nolibc init that checks what function events record
check-nolibc: tree
	@scripts/check-nolibc.sh

check-export:
	@scripts/export.sh --check && echo "patches/ matches build/linux"

# shellcheck, pyflakes3 and the self-test (scripts/test/harness_test.py) on the harness itself
check-harness: deps
	@scripts/check-harness.sh

check-patches: tree
	@scripts/check-patches.sh

check-bisect: tree
	@scripts/check-bisect.sh

check-sets: tree
	@scripts/check-sets.sh

clean:
	rm -rf build/obj build/obj-* build/logs build/*.cpio.gz

distclean:
	rm -rf build
