#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting, lints, every test of the workspace (real
# programs in the real jail, as root and as an unprivileged user), then the cgroup v2 path in QEMU guests.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
# The README's first command must keep working: the demo runs here too.
./scripts/demo.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The Kubernetes manifests (deploy/kubernetes/) against the Kubernetes API schemas, strictly.
./scripts/k8s-validate.sh
# The runtime layer's native module is a cdylib nothing links, so no test build makes it: build it
# (and the binaries) for the debug profile the tests use, beside target/debug/warden.
cargo build -p warden -p warden-corpus -p warden-hook
cargo nextest run --workspace --all-targets --profile ci
# Three nodes behind HAProxy on this machine: routing, failover, rejoin (docs/scale-out.md).
./scripts/scale-out-test.sh
./scripts/vm-cgroup2/run.sh
# The full attack and benign corpus through every layer; fails on any escape or benign regression.
# JUnit report: target/corpus-junit.xml.
./scripts/corpus-report.sh --ci
