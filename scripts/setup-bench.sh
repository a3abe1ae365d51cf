#!/bin/sh
# Installs what the policy benchmarks need (bench/check/run.sh), on a Debian/Ubuntu host.
#   hyperfine   side-by-side timing of whole commands (apt)
#   valgrind    instruction counts of the runtime layer in-process (bench/hook/instructions.sh; apt)
#   ruff        the peer `warden check` is compared with, from PyPI, pinned, in a project-local venv
#               (target/bench-venv), so the system Python is left alone
# Usage: scripts/setup-bench.sh   (apt-get needs root when hyperfine or valgrind is missing)
set -eu
RUFF_VERSION=0.17.6
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/target/bench-venv"

missing=""
command -v hyperfine >/dev/null 2>&1 || missing="$missing hyperfine"
command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
if [ -n "$missing" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086 # one word per package
    apt-get install -y -qq $missing
fi

# The system interpreter when it has venv; else the first python3 on PATH (ruff is a native binary
# and does not care which interpreter installed it).
python=/usr/bin/python3
"$python" -c 'import venv, ensurepip' 2>/dev/null || python=python3
if [ ! -x "$venv/bin/ruff" ] || [ "$("$venv/bin/ruff" --version)" != "ruff $RUFF_VERSION" ]; then
    [ -x "$venv/bin/pip" ] || "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "ruff==$RUFF_VERSION"
fi
echo "setup-bench: $(hyperfine --version), $(valgrind --version), $("$venv/bin/ruff" --version) in $venv"
