#!/bin/sh
# Whole-command benchmark of issue 2: `warden check` against `ruff check --select S` (ruff's
# flake8-bandit security rules, the fastest peer) over the same files, side by side in one hyperfine run.
#
# Usage: bench/check/run.sh [DIR]      (default DIR: ../shared/corpora/ds1000/programs, 1000 programs)
#   env RUNS (default 40), WARMUP (default 5); BASELINE=/path/to/another/warden adds it as a third
#   command (e.g. a build of an earlier commit, to measure a change)
# Needs: scripts/setup-bench.sh (hyperfine, pinned ruff in target/bench-venv).
# Writes bench/check/results/ds1000.{json,md} and prints the median ratio warden/ruff.
# Both commands exit non-zero when they find something (warden: a denied program), hence `-i`.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-"$root/../shared/corpora/ds1000/programs"}
dir=$(cd "$dir" && pwd)
runs=${RUNS:-40}
warmup=${WARMUP:-5}
results="$root/bench/check/results"
name=$(basename "$(dirname "$dir")")
ruff="$root/target/bench-venv/bin/ruff"
warden="$root/target/release/warden"

[ -x "$ruff" ] || { echo "run.sh: $ruff missing; run scripts/setup-bench.sh" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "run.sh: hyperfine missing; run scripts/setup-bench.sh" >&2; exit 2; }
(cd "$root" && cargo build --release --quiet -p warden)
mkdir -p "$results"

files=$(find "$dir" -name '*.py' | wc -l)
bytes=$(find "$dir" -name '*.py' -exec cat {} + | wc -c)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- policy cli 2>/dev/null || commit="$commit+changes"
echo "$name: $files files, $bytes bytes; $("$ruff" --version); warden $commit; $(nproc) cores"

# -N: no intermediate shell, so ~1 ms of shell start-up does not blur 20 ms commands.
# --isolated: ruff ignores any pyproject.toml/ruff.toml above the corpus; --no-cache: it re-checks
# every file each run, as warden does.
set -- -n "warden check" "$warden check --format json $dir" \
    -n "ruff check --select S" "$ruff check --isolated --select S --no-cache --quiet --exit-zero $dir"
[ -z "${BASELINE:-}" ] || set -- "$@" -n "baseline warden check" "$BASELINE check --format json $dir"
hyperfine -N -i --warmup "$warmup" --runs "$runs" \
    --export-json "$results/$name.json" --export-markdown "$results/$name.md" "$@"

python3 - "$results/$name.json" "$bytes" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
bytes_ = int(sys.argv[2])
warden, ruff = results["warden check"], results["ruff check --select S"]
for name, r in results.items():
    cpu = r["user"] + r["system"]
    print(f"{name:24} median {r['median']*1e3:7.1f} ms  (mean {r['mean']*1e3:.1f} ± {r['stddev']*1e3:.1f}, "
          f"min {r['min']*1e3:.1f}; CPU {cpu*1e3:.1f} ms)  {bytes_/r['median']/1e6:.1f} MB/s wall")
if "baseline warden check" in results:
    base = results["baseline warden check"]["median"]
    print(f"median ratio baseline/ruff: {base / ruff['median']:.2f}; warden speed-up over baseline: "
          f"{base / warden['median']:.2f}x")
ratio = warden["median"] / ruff["median"]
print(f"median ratio warden/ruff: {ratio:.2f} (goal: <= 2.00) -> {'met' if ratio <= 2 else 'NOT met'}")
PY
