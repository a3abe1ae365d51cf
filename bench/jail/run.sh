#!/bin/sh
# Side-by-side start-up cost of a trivial program: the bare interpreter, `warden run --no-policy`
# (every layer on, cgroup included when run as root) and bubblewrap with comparable isolation.
#
# Usage: bench/jail/run.sh [ROUNDS] [RUNS]     (default 5 rounds of 30 runs per command)
# Needs hyperfine and bubblewrap (scripts/setup-jail.sh installs them). Run as root for cgroups.
# The commands are measured in alternating rounds so that background noise hits all of them alike;
# medians are taken over all rounds. Set WARDEN=/path/to/warden to skip the build (its
# libwarden_hook.so must sit beside it), BASELINE=/path/to/older/warden to add an older build as a
# fourth command, RT=1 (root) to run the rounds under `chrt -f 10`, so that other jobs on a shared
# machine do not preempt any of the commands. The table is also written to
# bench/jail/results/cold-<date>.txt.
set -eu
rounds=${1:-5}
runs=${2:-30}
root=$(cd "$(dirname "$0")/../.." && pwd)
python=/usr/bin/python3
for tool in hyperfine bwrap; do
    command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/setup-jail.sh" >&2; exit 2; }
done
if [ -z "${WARDEN:-}" ]; then
    cargo build --quiet --release -p warden --manifest-path "$root/Cargo.toml"
    WARDEN="$root/target/release/warden"
fi
work=$(mktemp -d /tmp/warden-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
printf 'pass\n' > "$work/prog.py"
# The same interpreter for all three commands (the built-in policy names a provisioned runtime, whose
# venv and .pth files would make the comparison unfair); default limits and required layers otherwise.
printf '[policy]\nname = "bench"\n[runtime]\ninterpreter = "%s"\n' "$python" > "$work/rules.toml"
# An ordinary user without a delegated cgroup has no memory cgroup: the memory limit is then refused
# unless the rules accept the best effort (docs/jail.md, "Memory: enforced, or refused").
[ "$(id -u)" = 0 ] || printf '[limits]\nmemory_enforcement = "best-effort"\n' >> "$work/rules.toml"
chmod 644 "$work/prog.py" "$work/rules.toml"

bare="$python -I $work/prog.py"
jail="$WARDEN run --no-policy --rules $work/rules.toml $work/prog.py"
base=${BASELINE:+"$BASELINE run --no-policy --rules $work/rules.toml $work/prog.py"}
# bubblewrap: the same namespaces, read-only /usr, fresh /proc and /dev, private /tmp and /work, uid
# 65534, no capabilities, new session, clean environment. (No seccomp, Landlock or cgroup: bubblewrap
# has no Landlock or cgroup support and takes seccomp only as a precompiled program.)
bwrap="bwrap --unshare-all --die-with-parent --new-session --uid 65534 --gid 65534 --cap-drop ALL \
--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/sbin /sbin \
--proc /proc --dev /dev --tmpfs /tmp --tmpfs /work --ro-bind $work/prog.py /run/warden/main.py --chdir /work \
--clearenv --setenv PATH /usr/bin:/bin --setenv HOME /tmp --setenv LANG C.UTF-8 \
$python -I /run/warden/main.py"

# Sanity: all three run the program successfully.
$bare && $jail 2>/dev/null && $bwrap || { echo "a command failed" >&2; exit 1; }
if [ -n "$base" ]; then $base 2>/dev/null || { echo "the baseline failed" >&2; exit 1; }; fi
rt=
[ "${RT:-0}" = 1 ] && rt="chrt -f 10"

i=1
while [ "$i" -le "$rounds" ]; do
    if [ -n "$base" ]; then
        $rt hyperfine --shell=none --warmup 5 --runs "$runs" --style none \
            --export-json "$work/round-$i.json" \
            -n bare "$bare" -n warden "$jail" -n bwrap "$bwrap" -n baseline "$base" >/dev/null
    else
        $rt hyperfine --shell=none --warmup 5 --runs "$runs" --style none \
            --export-json "$work/round-$i.json" \
            -n bare "$bare" -n warden "$jail" -n bwrap "$bwrap" >/dev/null
    fi
    i=$((i + 1))
done

mkdir -p "$root/bench/jail/results"
"$python" - "$work" "$rounds" "${RT:-0}" "$root/bench/jail/results" <<'PY'
import glob, json, os, platform, statistics, subprocess, sys, datetime
work, rounds, rt, results = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
times = {}
for path in sorted(glob.glob(os.path.join(work, "round-*.json"))):
    for result in json.load(open(path))["results"]:
        times.setdefault(result["command"], []).extend(result["times"])
median = {name: statistics.median(ts) * 1000 for name, ts in times.items()}
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
whoami = "root (cgroup on)" if os.geteuid() == 0 else "unprivileged (no cgroup)"
load = open("/proc/loadavg").read().split()[:3]
lines = [
    f"# jail start-up benchmark, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
    f"{platform.node()}: {os.cpu_count()} CPUs ({cpu}), kernel {platform.release()}, as {whoami}; "
    f"{rounds} rounds x {len(times['bare']) // rounds} runs{', chrt -f 10' if rt else ''}; "
    f"load average after: {' '.join(load)}",
    f"{'command':<9} {'median ms':>10} {'ratio to bare':>14} {'runs':>6}",
]
for name in ("bare", "warden", "bwrap", "baseline"):
    if name in median:
        lines.append(f"{name:<9} {median[name]:>10.2f} {median[name] / median['bare']:>14.2f} {len(times[name]):>6}")
verdict = "met" if median["warden"] <= median["bwrap"] else "not met"
lines.append(f"goal (warden's ratio <= bubblewrap's, same run): {verdict}")
print("\n".join(lines))
with open(os.path.join(results, f"cold-{datetime.date.today()}.txt"), "a") as out:
    out.write("\n".join(lines) + "\n\n")
PY
