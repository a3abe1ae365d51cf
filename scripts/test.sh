#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting, lints, every test of the workspace (real
# programs in the real jail, as root and as an unprivileged user), then the cgroup v2 path in QEMU guests.
#
# One build serves everything: the suite sets WARDEN_PROFILE=dev, so setup.sh, the demo, the corpus
# run, the scale-out test and the guests all use target/debug/, the binaries the test binaries are
# built beside (a second, release build of the workspace would cost CI minutes and test nothing more).
# Each step's wall time and CPU time are printed at the end, also when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export WARDEN_PROFILE=dev
# setup.sh and every script build the workspace with every target (scripts/lib/profile.sh): the
# units nextest needs, so no crate is compiled twice.
export WARDEN_BUILD_ALL=1

steps="$(mktemp)"
trap 'status=$?; echo "== test.sh steps (wall s, CPU s of the step'"'"'s processes)"; cat "$steps"; echo "total: ${SECONDS}s, exit $status"; rm -f "$steps" "$steps.times"' EXIT

cpu_now() { # sets `cpu`: the user + system CPU seconds of the suite's finished processes so far
    times >"$steps.times"
    cpu="$(awk 'NR == 2 {
        total = 0
        for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); total += t[1] * 60 + t[2] }
        printf "%d", total
    }' "$steps.times")"
}
step() { # name, command...
    local name="$1" start="$SECONDS" cpu before
    shift
    cpu_now
    before="$cpu"
    echo "== $name"
    "$@"
    cpu_now
    printf '%-14s %5d %5d\n' "$name" "$((SECONDS - start))" "$((cpu - before))" >>"$steps"
}

step setup ./scripts/setup.sh
# The README's first command must keep working: the demo runs here too.
step demo ./scripts/demo.sh
step fmt cargo fmt --all -- --check
step clippy cargo clippy --workspace --all-targets -- -D warnings
# The crate boundaries docs/architecture.md draws (cargo tree over the lock file).
step boundaries ./scripts/boundaries.sh
# The Python client linted and typed (ruff, mypy --strict), its unit tests and the bootstrap's host
# unit tests, no server and no jail (pinned tools in target/python-checks).
step python env WARDEN_BOOTSTRAP_TESTS=nextest ./scripts/python-checks.sh
# The Kubernetes manifests (deploy/kubernetes/) against the Kubernetes API schemas, strictly.
step k8s ./scripts/k8s-validate.sh
# setup.sh built warden, warden-corpus and the runtime layer's native module (a cdylib nothing links,
# so no test build makes it) in target/debug/, where the tests look for them.
step nextest cargo nextest run --workspace --all-targets --profile ci
# Three nodes behind HAProxy on this machine: routing, failover, rejoin (docs/scale-out.md).
step scale-out env WARDEN_BIN="$PWD/target/debug/warden" ./scripts/scale-out-test.sh
step vm-cgroup2 ./scripts/vm-cgroup2/run.sh
# The full attack and benign corpus through every layer; fails on any escape or benign regression.
# JUnit report: target/corpus-junit.xml. Four jobs on two cores: the attack cases spend most of their
# time waiting for their clock (sleeps, busy loops ended at the wall-time limit), so two jobs leave a
# core idle (2026-11-28: 400 s with 2 jobs, 312 s with 4, both clean).
step corpus ./scripts/corpus-report.sh --ci --jobs 4
