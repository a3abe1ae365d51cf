#!/usr/bin/env bash
# Installs everything warden's build and tests need on a fresh Debian 12 machine, then builds warden.
# Idempotent: packages already present are not reinstalled. Run as root (CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."

need_packages=()
for pkg in "$@"; do need_packages+=("$pkg"); done
# Debian packages the build and the test suite use (haproxy: the router of scripts/scale-out-test.sh).
for pkg in build-essential pkg-config python3 python3-venv passwd util-linux iproute2 haproxy; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_packages+=("$pkg")
done
if [ "${#need_packages[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing packages ${need_packages[*]}; run this script as root" >&2
        exit 2
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_packages[@]}"
fi

command -v cargo >/dev/null || { echo "setup: cargo (Rust 1.95) is required" >&2; exit 2; }
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest

# Optional per-area set-up scripts (jail test prerequisites, benchmark tools).
for extra in scripts/setup-jail.sh; do
    if [ -x "$extra" ]; then "$extra"; fi
done
. scripts/lib/profile.sh
[ -z "$profile_error" ] || { echo "setup: $profile_error" >&2; exit 2; }
warden="$profile_dir/warden"

# The test venvs that need only PyPI are made while cargo builds (they wait on the network, the build
# on the CPU); each one's output is shown when it fails.
venv_logs="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$venv_logs"' EXIT
# The official MCP Python client tests/serve/mcp.rs drives `warden mcp` with (a venv in the data dir).
scripts/setup-mcp-test.sh >"$venv_logs/mcp" 2>&1 &
mcp_pid=$!
# smolagents, AutoGen and LangChain, pinned (clients/python/requirements-adapters.lock), for the adapters' tests.
scripts/adapters-venv.sh >"$venv_logs/adapters" 2>&1 &
adapters_pid=$!
# The OASIS SARIF 2.1.0 schema policy/tests/sarif.rs validates `--format sarif` against (from PyPI, pinned).
scripts/sarif-schema.sh >"$venv_logs/sarif" 2>&1 &
sarif_pid=$!

# warden-hook: the runtime layer's native module, found beside the warden binary (libwarden_hook.so).
build_warden
echo "setup: warden built at $warden (corpus runner: $profile_dir/warden-corpus, runtime layer: $profile_dir/libwarden_hook.so)"

# The Python runtime the default policy names: (re)installed when missing or when its pinned
# requirements changed.
if ! "$warden" runtime show default 2>/dev/null | grep -q '"requirements"' \
    || ! diff -q <("$warden" runtime show default | python3 -c 'import json,sys; print(json.load(sys.stdin)["requirements"], end="")') rules/runtime/default.txt >/dev/null; then
    "$warden" runtime install --name default
fi

if ! wait "$mcp_pid"; then
    cat "$venv_logs/mcp" >&2
    echo "setup: the MCP client venv could not be made (scripts/setup-mcp-test.sh)" >&2
    exit 1
fi
wait "$adapters_pid" || { cat "$venv_logs/adapters" >&2; echo "setup: the adapters' venv could not be made (scripts/adapters-venv.sh); only tests/serve/adapters.rs needs it" >&2; }
wait "$sarif_pid" || { cat "$venv_logs/sarif" >&2; echo "setup: the SARIF schema could not be fetched (scripts/sarif-schema.sh); only policy/tests/sarif.rs needs it" >&2; }

# The Jupyter kernel the session comparison (tests/sessions_jupyter.rs) and the session benchmark run cells
# in: ipykernel and jupyter_client on the default runtime's locked packages (a venv in the data dir).
# Only the tests and the benchmark need it: a failure here does not stop the demo (the test then fails
# and says why).
scripts/jupyter-venv.sh >/dev/null || echo "setup: the Jupyter venv could not be made (scripts/jupyter-venv.sh); only the session comparison test and benchmark need it" >&2
