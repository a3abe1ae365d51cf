#!/bin/sh
# The runtime layer's cost on DS-1000 (issue 13 asks at most 3 %): every runnable DS-1000 case (no
# network, no torch/tensorflow/gensim) through `warden run --no-policy` with the audit hook on and with
# `--no-hooks`, side by side in one run: for each case the two runs follow each other (the order
# alternates case by case, so background load and caches hit both alike). The exec ban is on in both
# (it belongs to the kernel layer) and the static layer is off in both, so the difference is the hook:
# loading the native module, installing it, and every audit event the program and its libraries raise.
#
# Reports medians: of the per-case overhead (on/off - 1) in wall time (warden's own, start to record)
# and in the jail's CPU time (the record's usage.cpu_ms, which background load does not inflate), and
# the totals. Cases that do not end `ok` both ways are left out of the figures (and listed).
#
# Usage: bench/hook/ds1000.sh [ROUNDS] [CORPUS_DIR]   (default 1 round; ../shared/corpora/ds1000)
# Needs the default runtime (scripts/setup.sh). Run as root. ~2 × 15 min per round on 2 shared cores.
# Set WARDEN=/path/to/warden to skip the build (its libwarden_hook.so must be beside it); ONLY=N runs
# only the first N cases (a quick look); STEP=K every K-th case (a sample across the sections). The
# per-case times are kept in $OUT (default a temp file).
set -eu
rounds=${1:-1}
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${2:-$root/../shared/corpora/ds1000}
[ -f "$corpus/index.jsonl" ] || { echo "no DS-1000 corpus at $corpus" >&2; exit 2; }
if [ -z "${WARDEN:-}" ]; then
    cargo build --quiet --release -p warden -p warden-hook --manifest-path "$root/Cargo.toml"
    WARDEN="$root/target/release/warden"
fi
out=${OUT:-$(mktemp /tmp/warden-bench-hook-ds1000.XXXXXX.jsonl)}

python3 - "$WARDEN" "$corpus" "$rounds" "$out" "${ONLY:-0}" "${STEP:-1}" <<'PY'
import datetime, json, os, statistics, subprocess, sys, time

warden, corpus, rounds, out, only, step = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
skip = {"torch", "tensorflow", "gensim"}
cases = []
for line in open(os.path.join(corpus, "index.jsonl")):
    row = json.loads(line)
    if row.get("needs_network") or skip & set(row.get("third_party_imports", [])):
        continue
    cases.append((row["id"], os.path.join(corpus, row["file"])))
cases = cases[::max(1, step)]
if only:
    cases = cases[:only]

def run(path, hooks):
    args = [warden, "run", "--no-policy", "--json"] + ([] if hooks else ["--no-hooks"]) + [path]
    start = time.monotonic()
    proc = subprocess.run(args, capture_output=True)
    wall = (time.monotonic() - start) * 1000
    try:
        record = json.loads(proc.stdout)
    except ValueError:
        return {"status": "no-record", "wall_ms": wall, "cpu_ms": None}
    ok = record.get("status") == "ok" and "DS1000_STANDALONE_OK" in (record.get("stdout") or "")
    return {"status": "ok" if ok else record.get("status"), "wall_ms": wall,
            "cpu_ms": (record.get("usage") or {}).get("cpu_ms")}

started = datetime.datetime.now()
load_before = os.getloadavg()[0]
results = {case: {"on": [], "off": []} for case, _ in cases}
with open(out, "w") as log:
    for r in range(rounds):
        for i, (case, path) in enumerate(cases):
            order = ("on", "off") if (i + r) % 2 == 0 else ("off", "on")
            for mode in order:
                result = run(path, mode == "on")
                results[case][mode].append(result)
                log.write(json.dumps({"case": case, "round": r, "hook": mode, **result}) + "\n")
            log.flush()

def med(values):
    return statistics.median(values) if values else float("nan")

good, bad = [], []
for case, by_mode in results.items():
    if all(x["status"] == "ok" for mode in ("on", "off") for x in by_mode[mode]):
        good.append(case)
    else:
        bad.append((case, [x["status"] for x in by_mode["on"]], [x["status"] for x in by_mode["off"]]))

def per_case(key):
    pairs = [(med([x[key] for x in results[c]["on"]]), med([x[key] for x in results[c]["off"]])) for c in good]
    pairs = [(on, off) for on, off in pairs if on is not None and off]
    return pairs

print(f"date: {started:%Y-%m-%d %H:%M}  cases: {len(cases)} ({len(good)} ok both ways)  rounds: {rounds}  "
      f"cores: {os.cpu_count()}  load: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after  "
      f"took: {(datetime.datetime.now() - started).seconds // 60} min")
for key, label in (("wall_ms", "wall (warden run, end to end)"), ("cpu_ms", "CPU (the jail's usage.cpu_ms)")):
    pairs = per_case(key)
    on_total, off_total = sum(on for on, _ in pairs), sum(off for _, off in pairs)
    ratios = [on / off - 1 for on, off in pairs]
    print(f"{label:32} median per case: on {med([p[0] for p in pairs]):7.0f} ms  off {med([p[1] for p in pairs]):7.0f} ms  "
          f"median overhead {100 * med(ratios):+5.1f} %  (median difference {med([on - off for on, off in pairs]):+6.0f} ms)  "
          f"total on {on_total / 1000:7.1f} s  off {off_total / 1000:7.1f} s  ({100 * (on_total / off_total - 1):+5.1f} %)")
for case, on, off in bad:
    print(f"not ok both ways: {case}  hook on {on}  hook off {off}")
print(f"per-case times: {out}")
PY
