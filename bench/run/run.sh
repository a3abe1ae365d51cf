#!/usr/bin/env bash
# Policy overhead of `warden run`: the full pipeline versus the jail alone (`--no-policy`) on a 300-line
# program, side by side in one hyperfine run. Goal (issue 4): at most 5 ms more, median.
# The cold start against the bare interpreter and bubblewrap (issue 15) is bench/jail/run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v hyperfine >/dev/null || { echo "hyperfine missing: run scripts/setup-bench.sh" >&2; exit 2; }
cargo build --release -p warden >/dev/null
warden=target/release/warden
mkdir -p bench/run/results
hyperfine -N --warmup 5 --runs "${RUNS:-40}" \
    --export-json bench/run/results/policy-overhead.json \
    --export-markdown bench/run/results/policy-overhead.md \
    -n "warden run" "$warden run bench/run/program300.py" \
    -n "warden run --no-policy" "$warden run --no-policy bench/run/program300.py"
python3 - <<'PY'
import json, statistics
data = json.load(open("bench/run/results/policy-overhead.json"))["results"]
med = {r["command"]: statistics.median(r["times"]) * 1000 for r in data}
full, bare = med["warden run"], med["warden run --no-policy"]
print(f"median: warden run {full:.1f} ms, --no-policy {bare:.1f} ms, overhead {full - bare:+.1f} ms (ratio {full / bare:.3f})")
PY
