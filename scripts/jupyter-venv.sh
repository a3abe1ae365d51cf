#!/bin/sh
# Makes the Python venv the session comparison (scripts/jupyter-compare.py, tests/sessions_jupyter.rs)
# and the session benchmark (bench/sessions/) drive a real Jupyter kernel from: ipykernel and
# jupyter_client from PyPI (pinned below) on top of exactly the packages of the default runtime, installed
# from its lock ($data_dir/runtimes/default/requirements.lock, with its hashes), so a cell computes the same
# thing in Jupyter and in warden. The venv is made from the same interpreter as the runtime
# (/usr/bin/python3, Debian's 3.11) in $WARDEN_DATA_DIR/test-venvs/jupyter (default /var/lib/warden as
# root, else $XDG_DATA_HOME/warden or ~/.local/share/warden: the data dir warden itself uses).
#
# Idempotent and fast when done: a stamp holds the hash of the lock and of the pins below; the venv is
# rebuilt only when either changed (a new runtime lock, a new pin). Prints the venv's python on its last
# line. Needs the default runtime installed first (scripts/setup.sh does both, in that order).
set -eu
IPYKERNEL_VERSION="7.4.0"
JUPYTER_CLIENT_VERSION="8.10.0"
# IPython 8, not 9: matplotlib 3.7 (the runtime's) imports IPython.core.pylabtools.backend2gui when pyplot
# loads its backend, which IPython 9 removed; with IPython 9 the first cell that draws a figure shows
# nothing in Jupyter (the inline backend's set-up fails and is retried after the cell).
IPYTHON_VERSION="8.39.0"
MATPLOTLIB_INLINE_VERSION="0.2.2"

. "$(dirname "$0")/lib/data-dir.sh"
lock="${WARDEN_JUPYTER_LOCK:-$data_dir/runtimes/default/requirements.lock}"
venv="$data_dir/test-venvs/jupyter"
stamp="$venv/.warden-jupyter-stamp"
base_python=/usr/bin/python3

if [ ! -f "$lock" ]; then
    echo "jupyter-venv: no lock at $lock: install the default runtime first (warden runtime install --name default)" >&2
    exit 2
fi
pins="ipykernel==$IPYKERNEL_VERSION jupyter_client==$JUPYTER_CLIENT_VERSION ipython==$IPYTHON_VERSION matplotlib-inline==$MATPLOTLIB_INLINE_VERSION"
want="$( (cat "$lock"; echo "$pins") | sha256sum | cut -d' ' -f1)"

if [ -x "$venv/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "jupyter-venv: ok ($venv)" >&2
    echo "$venv/bin/python3"
    exit 0
fi

# One maker at a time (the comparison's tests run in parallel and each calls this script): under the
# lock the script starts again, so one that waited finds the venv made.
mkdir -p "$data_dir/test-venvs"
if [ -z "${WARDEN_JUPYTER_VENV_LOCKED:-}" ] && command -v flock >/dev/null; then
    WARDEN_JUPYTER_VENV_LOCKED=1 exec flock "$data_dir/test-venvs/.jupyter.lock" "$0" "$@"
fi
echo "jupyter-venv: making $venv (runtime lock $lock; $pins)" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$base_python" -m venv "$venv"
pip() { "$venv/bin/python3" -m pip --quiet --disable-pip-version-check "$@"; }
# 1. The runtime's packages, exactly: the lock is complete and hashed, as `warden runtime install` uses it.
pip install --only-binary=:all: --no-deps --require-hashes -r "$lock"
# 2. The kernel and its client, with every package of the lock held at its locked version.
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
sed -e 's/ --hash=.*//' -e '/^#/d' -e '/^$/d' "$lock" >"$constraints"
# shellcheck disable=SC2086
pip install --only-binary=:all: -c "$constraints" $pins
"$venv/bin/python3" -c 'import ipykernel, jupyter_client, pandas, matplotlib, sklearn, statsmodels, seaborn'
# The kernel spec a KernelManager starts: this venv's own interpreter.
"$venv/bin/python3" -m ipykernel install --prefix "$venv" --name python3 >/dev/null
echo "$want" >"$stamp"
echo "jupyter-venv: installed ($venv)" >&2
echo "$venv/bin/python3"
