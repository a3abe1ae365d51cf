#!/usr/bin/env bash
# Session overhead (issue 14), side by side in one run: `x + 1` through a warden session over the Unix
# socket of `warden serve` (release build) against the same cell through a local Jupyter kernel driven by
# jupyter_client (no sandbox), and the time to create a session against the time to start a kernel.
# bench/sessions/bench.py says what is measured and how; the figures go to docs/benchmarks.md.
# Usage: bench/sessions/run.sh [ROUNDS] [CELLS] [CREATES]   (as root, like the server; defaults 5 200 10)
# Writes bench/sessions/results/<date>-<hhmm>.json (UTC).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-5}"
cells="${2:-200}"
creates="${3:-10}"
cargo build --release --quiet -p warden -p warden-hook
python="$(scripts/jupyter-venv.sh)"
mkdir -p bench/sessions/results
out="bench/sessions/results/$(date -u +%F-%H%M).json"
"$python" bench/sessions/bench.py --warden target/release/warden --rounds "$rounds" --cells "$cells" \
    --creates "$creates" --json "$out"
echo "results: $out"
