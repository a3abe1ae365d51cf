#!/bin/sh
# The runtime layer's cost, side by side: `warden run --no-policy` of a trivial program (`pass`) with the
# audit hook on and with `--no-hooks`, and of a pandas program (import, a 200,000-row groupby) the same
# two ways. Both use the default policy and its runtime; the exec ban is on in both (it belongs to the
# kernel layer), so the difference is the hook: loading the native module, installing the hook, and
# every audit event the program raises.
#
# Usage: bench/hook/run.sh [ROUNDS] [RUNS]    (default 5 rounds of 20 runs per command)
# Needs hyperfine (scripts/setup-bench.sh) and the default runtime (scripts/setup.sh). Run as root.
# The commands alternate round by round so background load hits them alike; medians over all rounds.
# Set WARDEN=/path/to/warden to skip the build (its libwarden_hook.so must be beside it).
set -eu
rounds=${1:-5}
runs=${2:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v hyperfine >/dev/null || { echo "missing hyperfine: run scripts/setup-bench.sh" >&2; exit 2; }
if [ -z "${WARDEN:-}" ]; then
    cargo build --quiet --release -p warden -p warden-hook --manifest-path "$root/Cargo.toml"
    WARDEN="$root/target/release/warden"
fi
work=$(mktemp -d /tmp/warden-bench-hook.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
printf 'pass\n' > "$work/trivial.py"
cat > "$work/pandas.py" <<'PY'
import numpy as np
import pandas as pd
rng = np.random.default_rng(0)
df = pd.DataFrame({"k": rng.integers(0, 100, 200_000), "v": rng.random(200_000)})
print(df.groupby("k")["v"].agg(["mean", "sum"]).shape)
PY
chmod 644 "$work"/*.py

for round in $(seq "$rounds"); do
    for program in trivial pandas; do
        n=$runs
        [ "$program" = pandas ] && n=$(( (runs + 3) / 4 ))
        hyperfine -N -i --warmup 2 --runs "$n" --export-json "$work/$program-$round.json" \
            -n "hook-on" "$WARDEN run --no-policy $work/$program.py" \
            -n "hook-off" "$WARDEN run --no-policy --no-hooks $work/$program.py" >/dev/null
    done
done

python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys, datetime, os
work, rounds = sys.argv[1], int(sys.argv[2])
print(f"date: {datetime.date.today()}  cores: {os.cpu_count()}  load: {os.getloadavg()[0]:.2f}")
for program in ("trivial", "pandas"):
    times = {"hook-on": [], "hook-off": []}
    for r in range(1, rounds + 1):
        for result in json.load(open(f"{work}/{program}-{r}.json"))["results"]:
            times[result["command"]].extend(result["times"])
    on, off = (statistics.median(times[k]) * 1000 for k in ("hook-on", "hook-off"))
    print(f"{program:8} hook on {on:8.1f} ms   hook off {off:8.1f} ms   "
          f"difference {on - off:+7.1f} ms   ratio {on / off:.3f}   (n={len(times['hook-on'])} each)")
PY
