#!/bin/sh
# In-process throughput of warden_policy::check (policy/benches/check.rs), single-threaded, so MB/s is
# per core. Runs the criterion benchmark and prints each input's median time and MB/s (10^6 bytes).
# Usage: bench/check/inprocess.sh [criterion filter]    e.g. bench/check/inprocess.sh ds1000
# Writes bench/check/results/inprocess.md.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo bench --quiet -p warden-policy --bench check -- ${1:+"$1"} >/dev/null
mkdir -p bench/check/results
python3 - target/criterion/check bench/check/results/inprocess.md <<'PY'
import json, os, sys
base, out = sys.argv[1], sys.argv[2]
rows = []
for name in sorted(os.listdir(base)):
    new = os.path.join(base, name, "new")
    if not os.path.exists(os.path.join(new, "estimates.json")):
        continue
    median = json.load(open(os.path.join(new, "estimates.json")))["median"]
    bytes_ = json.load(open(os.path.join(new, "benchmark.json")))["throughput"]["BytesDecimal"]
    ns = median["point_estimate"]
    low = median["confidence_interval"]["lower_bound"]
    high = median["confidence_interval"]["upper_bound"]
    rows.append((name, bytes_, ns, bytes_ / ns * 1e3, bytes_ / high * 1e3, bytes_ / low * 1e3))
lines = ["| input | bytes | median time | MB/s per core (median) | 95% CI of the median |",
         "|---|---:|---:|---:|---|"]
for name, bytes_, ns, mbps, lo, hi in rows:
    lines.append(f"| {name} | {bytes_} | {ns/1e6:.2f} ms | {mbps:.1f} | {lo:.1f} – {hi:.1f} |")
text = "\n".join(lines) + "\n"
open(out, "w").write(text)
print(text, end="")
PY
