#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting, lints, then every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo nextest run --workspace --all-targets --profile ci
