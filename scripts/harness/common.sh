# Shared settings for the harness scripts.  Sourced, not executed.
# shellcheck shell=bash
# The variables are for the scripts that source this file:
# shellcheck disable=SC2034

# The base kernel: Debian's linux-source-6.12, the version the series was
# last tested on.  Change it here and nowhere else.
BASE_PKG=linux-source-6.12
BASE_VERSION=6.12.117-1~deb12u1
BASE_SHA256=e849faf31ca3555757f3a8877cb01af92122f744f75d1f3102734651c4e14703

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${FBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/function-events}
BUILD=$TOP/build
TREE=$BUILD/linux
LOGS=$BUILD/logs
JOBS=${JOBS:-$(nproc)}

export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=fbe
export KBUILD_BUILD_HOST=fbe
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-fbe}
export GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-fbe@localhost}
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-fbe}
export GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-fbe@localhost}

say() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The one result channel (scripts/harness/results.py): what a step found and how
# long it took, as JSON lines in build/results.jsonl.
# A module of scripts/harness/ run as a command: harness MODULE ARGS...
harness() { PYTHONPATH="$TOP/scripts" python3 -m "harness.$1" "${@:2}"; }
results() { harness results "$@"; }
# A step run alone is a run of its own: name it for its records
# (.ci/run names the run and each step itself).
results_begin() { # STEP
	[ -n "$FBE_RUN" ] || FBE_RUN=$(date +%Y%m%dT%H%M%S)-$$
	[ -n "$FBE_STEP" ] || FBE_STEP=$1
	export FBE_RUN FBE_STEP
}
# Time accounting: phase NAME START
phase_done() {
	results add "$1" --seconds $(( $(date +%s) - $2 ))
}
