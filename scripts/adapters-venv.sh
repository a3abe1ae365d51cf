#!/bin/sh
# Makes the Python venv the framework adapters' tests (tests/serve/adapters.rs, clients/python/tests/)
# run in: smolagents, AutoGen and LangChain from PyPI, exactly as clients/python/requirements-adapters.lock
# pins them (every package with its version and hash; installed --no-deps --require-hashes). The venv
# is made from /usr/bin/python3 (Debian's 3.11) in $WARDEN_DATA_DIR/test-venvs/adapters (default
# /var/lib/warden as root, else $XDG_DATA_HOME/warden or ~/.local/share/warden: the data dir warden
# itself uses). The client (clients/python/warden_client) is not installed in it: the tests put the
# repository's copy on PYTHONPATH, so they always test the code in the tree.
#
# Idempotent and fast when done: a stamp holds the lock's hash, and the venv is rebuilt only when the
# lock changed. Prints the venv's python on its last line. Made from scratch in about 30 s (2 cores,
# ~60 wheels, ~180 MB).
set -eu
repo="$(cd "$(dirname "$0")/.." && pwd)"
lock="$repo/clients/python/requirements-adapters.lock"

. "$(dirname "$0")/lib/data-dir.sh"
venv="$data_dir/test-venvs/adapters"
stamp="$venv/.warden-adapters-stamp"
want="$(sha256sum "$lock" | cut -d' ' -f1)"

if [ -x "$venv/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "adapters-venv: ok ($venv)" >&2
    echo "$venv/bin/python3"
    exit 0
fi

# One maker at a time (the adapter tests run in parallel and each calls this script): under the lock
# the script starts again, so one that waited finds the venv made.
mkdir -p "$data_dir/test-venvs"
if [ -z "${WARDEN_ADAPTERS_VENV_LOCKED:-}" ] && command -v flock >/dev/null; then
    WARDEN_ADAPTERS_VENV_LOCKED=1 exec flock "$data_dir/test-venvs/.adapters.lock" "$0" "$@"
fi
echo "adapters-venv: making $venv from $lock" >&2
started=$(date +%s)
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --no-input \
    --only-binary=:all: --no-deps --require-hashes -r "$lock"
"$venv/bin/python3" -c 'import smolagents, autogen_agentchat, autogen_ext.models.replay, langchain.agents, langchain_core.tools'
echo "$want" >"$stamp"
echo "adapters-venv: installed in $(( $(date +%s) - started )) s ($venv)" >&2
echo "$venv/bin/python3"
