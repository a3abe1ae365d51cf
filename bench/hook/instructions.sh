#!/bin/sh
# The runtime layer's cost in instructions: the hook loaded in-process, outside the jail, with the
# default policy's settings, counted by callgrind (deterministic on a machine whose CPU time moves by
# several percent from run to run). For each program, the interpreter runs it twice under
# `valgrind --tool=callgrind`: once plain, once after installing the hook as warden's bootstrap does
# (the same native module, settings, trusted roots and prefixes; no watchdog thread, no kernel
# layers). Prints the instructions both ways, the difference and its ratio.
#
# Usage: bench/hook/instructions.sh [PROGRAM.py ...]   (default: `import numpy`; `import pandas` and
# a DataFrame; DS-1000 case 0300)
# Needs valgrind (scripts/setup-bench.sh) and the default runtime (scripts/setup.sh). Run as root.
# ~1 min per program. Set WARDEN=/path/to/warden to skip the build (its libwarden_hook.so beside it).
#
# What it leaves out, and the jail's usage.cpu_ms includes: system calls (the hook's `lstat` of new
# directories and of the last component of each path it judges), page faults, the watchdog's wakes.
# What it counts that costs less than it weighs: `rep movsb` counts one instruction per byte, and
# CPython copies every `.pyc` into the `marshal.loads` event's arguments (~14 M of a pandas import).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v valgrind >/dev/null || { echo "missing valgrind: run scripts/setup-bench.sh" >&2; exit 2; }
if [ -z "${WARDEN:-}" ]; then
    cargo build --quiet --release -p warden -p warden-hook --manifest-path "$root/Cargo.toml"
    WARDEN="$root/target/release/warden"
fi
library="$(dirname "$WARDEN")/libwarden_hook.so"
[ -f "$library" ] || { echo "no libwarden_hook.so beside $WARDEN" >&2; exit 2; }
work=$(mktemp -d /tmp/warden-bench-instructions.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

# The default policy, with /run/warden readable so one run can print the settings warden hands the
# hook (nothing else differs).
sed 's|^read = \[".", "/tmp"\]|read = [".", "/tmp", "/run/warden"]|' "$root/rules/default.toml" > "$work/rules.toml"
grep -q '"/run/warden"' "$work/rules.toml" || { echo "rules/default.toml's [files] read changed: update this script" >&2; exit 2; }
printf 'import sys\nprint(open("/run/warden/hook.json").read())\nprint(sys.executable)\n' > "$work/settings.py"
"$WARDEN" run --no-policy --json --rules "$work/rules.toml" "$work/settings.py" > "$work/record.json"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
record = json.load(open(f"{work}/record.json"))
if record.get("status") != "ok":
    sys.exit(f"the settings run ended {record.get('status')}: {record.get('stderr', '')[-400:]}")
settings, executable = record["stdout"].rstrip("\n").rsplit("\n", 1)
open(f"{work}/settings.json", "w").write(settings)
open(f"{work}/python", "w").write(executable)
PY
python=$(cat "$work/python")
cp "$library" "$work/_warden_hook.abi3.so"

cat > "$work/harness.py" <<'PY'
import os, sys
program, hook = sys.argv[1], sys.argv[2] == "on"
if hook:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import _warden_hook
    del sys.path[0]
    settings = open(os.path.join(here, "settings.json")).read()
    roots = [path for path in sys.path if path.startswith("/")]
    prefixes = sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})
    _warden_hook.install(settings, roots, prefixes, __file__, False)
    settings = None
source = open(program).read()
code = compile(source, "/run/warden/main.py", "exec", dont_inherit=True)
main = type(sys)("__main__")
main.__dict__["__builtins__"] = __builtins__
sys.modules["__main__"] = main
exec(code, main.__dict__)
PY

if [ "$#" -eq 0 ]; then
    printf 'import numpy as np\nprint(np.arange(3).sum())\n' > "$work/numpy.py"
    printf 'import pandas as pd, numpy as np\nprint(pd.DataFrame({"a": [1, 2]}).sum())\n' > "$work/pandas.py"
    set -- "$work/numpy.py" "$work/pandas.py"
    case0300="$root/../shared/corpora/ds1000/cases/ds1000_0300.py"
    [ -f "$case0300" ] && set -- "$@" "$case0300"
fi

echo "date: $(date -u '+%Y-%m-%d %H:%M') UTC  interpreter: $python  hook: $library"
printf '%-28s %15s %15s %13s %8s\n' program "off (instr.)" "on (instr.)" difference ratio
for program in "$@"; do
    for mode in off on; do
        # Run from the work dir (a write root of the settings is /tmp): the program's own files land there.
        out="$work/callgrind.$mode.out"
        (cd "$work" && valgrind --tool=callgrind --callgrind-out-file="$out" "$python" -I "$work/harness.py" "$program" "$mode" >/dev/null 2>"$work/valgrind.$mode.log") \
            || { echo "$program with the hook $mode failed:" >&2; tail -5 "$work/valgrind.$mode.log" >&2; exit 1; }
    done
    python3 - "$(basename "$program")" "$work/callgrind.off.out" "$work/callgrind.on.out" <<'PY'
import sys
def total(path):
    for line in open(path):
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    sys.exit(f"no instruction total in {path}")
name, off, on = sys.argv[1], total(sys.argv[2]), total(sys.argv[3])
print(f"{name:28} {off:15,} {on:15,} {on - off:+13,} {100 * (on / off - 1):+7.2f} %")
PY
done
