#!/usr/bin/env bash
# The warm pool (issue 15), side by side in one run, end to end over the Unix socket of
# `warden serve` (release build, the built-in policy, a server started with only a socket, a state
# dir and the [pool] table): print(1) warm against a bare `python3 -I -c pass`; a pandas program warm
# against the same program run by the runtime's bare interpreter (p50, p99); throughput of the pandas
# program at 16 clients on 2 run slots, pool on against pool off; a session from the pool until its
# first cell answered; PSS/USS of an idle pooled jail. bench/pool/bench.py says how.
# Usage: bench/pool/run.sh [SAMPLES] [SECONDS]   (as root, like the server; defaults 30 30)
# Writes bench/pool/results/<date>-<hhmm>.json (UTC).
set -euo pipefail
cd "$(dirname "$0")/../.."
samples="${1:-30}"
seconds="${2:-30}"
cargo build --release --quiet -p warden -p warden-hook
python="/var/lib/warden/runtimes/default/venv/bin/python3"
[ -x "$python" ] || { echo "the default runtime is missing: scripts/setup.sh installs it" >&2; exit 2; }
mkdir -p bench/pool/results
out="bench/pool/results/$(date -u +%F-%H%M).json"
python3 bench/pool/bench.py --warden target/release/warden --python "$python" \
    --samples "$samples" --seconds "$seconds" --json "$out"
echo "results: $out"
