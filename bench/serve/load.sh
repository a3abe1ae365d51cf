#!/usr/bin/env bash
# Load test of `warden serve` (tests/serve/load.rs): 500 run requests from 16 concurrent clients on
# the Unix socket, 2 run slots, queue of 10. Prints the figures the README records: answers by HTTP
# status, result statuses, throughput of results, latency percentiles of answered runs, server RSS.
# Run as root on a quiet machine; repeat it (./bench/serve/load.sh 3) and report the medians.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-3}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cargo build --release --quiet --tests
for i in $(seq 1 "$runs"); do
    WARDEN_LOAD_REPORT="$out/run-$i.json" cargo nextest run --release --test e2e -E "test(/^serve::load::/)" \
        --status-level none --final-status-level none >/dev/null 2>&1
    echo "run $i: $(cat "$out/run-$i.json")"
done
python3 - "$out" <<'PY'
import json, pathlib, statistics, sys, datetime
runs = [json.loads(p.read_text()) for p in sorted(pathlib.Path(sys.argv[1]).glob("run-*.json"))]
med = lambda key: statistics.median(key(r) for r in runs)
print(f"\n{datetime.date.today()}: {len(runs)} runs, medians")
print(f"  results/s           {med(lambda r: r['results_per_second']):.1f}")
for p in ("p50", "p90", "p99", "max"):
    print(f"  latency {p:<4} ms     {med(lambda r: r['latency_ms'][p]):.0f}")
print(f"  answered 200        {med(lambda r: r['http'].get('200', 0)):.0f} / 500")
print(f"  answered 429/503    {med(lambda r: r['http'].get('429', 0) + r['http'].get('503', 0)):.0f} / 500")
print(f"  server peak RSS MiB {med(lambda r: r['server_vm_hwm_kib']) / 1024:.1f}")
PY
