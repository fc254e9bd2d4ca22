# Function-based events for Linux 6.12: the patch series and its harness.
# See README.md.  The main targets:
#   make check    build the patched kernel, boot it in QEMU, run ftracetest
#   make run      boot it: a shell on a terminal, else a short demo
SHELL := /bin/bash
TESTS ?=
KCMDLINE ?=
export TESTS KCMDLINE

.PHONY: all check run deps base tree build export check-export \
	check-patches check-bisect clean distclean help

all: check

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'
	@echo 'other targets: deps base tree build export check-export check-patches check-bisect clean'

deps:
	@scripts/deps.sh

base: deps
	@scripts/fetch-base.sh >/dev/null

tree: base
	@t0=$$(date +%s) && scripts/tree.sh && \
	 mkdir -p build/logs && echo "tree $$(( $$(date +%s) - t0 ))" >> build/logs/times

build: tree
	@scripts/build.sh

check: build
	@scripts/check.sh

run: build
	@python3 scripts/qemu.py run --kcmdline "$(KCMDLINE)"

export:
	@scripts/export.sh

check-export:
	@scripts/export.sh --check && echo "patches/ matches build/linux"

check-patches: tree
	@scripts/check-patches.sh

check-bisect: tree
	@scripts/check-bisect.sh

clean:
	rm -rf build/obj build/obj-* build/logs build/*.cpio.gz

distclean:
	rm -rf build
