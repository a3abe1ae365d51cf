#!/bin/sh
# warden's Python checks, none of which needs a server or a jail:
#   - the client (clients/python): ruff and mypy (strict) with the settings of its pyproject.toml,
#     then its unit tests (clients/python/tests/unit: records, rendering, errors, the transport
#     against a scripted server on a real socket);
#   - the bootstrap (jail/src/bootstrap.py): pyflakes' checks (ruff's F), then its host unit tests
#     (jail/tests/python; also run by `cargo nextest run -p warden-jail --test bootstrap_python`).
# The client's tests against a real server stay in tests/serve/adapters.rs.
#
# ruff and mypy come from PyPI, pinned in clients/python/requirements-checks.txt, into a venv under
# target/ ($WARDEN_PYTHON_CHECKS_VENV to put it elsewhere) made on first use and again only when the
# pins change; their caches live there too, so nothing is written into the checkout. The tests run
# on /usr/bin/python3, the jail's interpreter. Exit status 0 when every check passes.
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3
venv=${WARDEN_PYTHON_CHECKS_VENV:-$repo/target/python-checks}
pins=$repo/clients/python/requirements-checks.txt
want=$(sha256sum "$pins" | cut -d' ' -f1)

if [ ! -x "$venv/bin/mypy" ] || [ "$(cat "$venv/.warden-pins" 2>/dev/null)" != "$want" ]; then
    echo "python-checks: installing the pinned ruff and mypy into $venv" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$pins"
    echo "$want" > "$venv/.warden-pins"
fi

export RUFF_CACHE_DIR="$venv/ruff-cache" MYPY_CACHE_DIR="$venv/mypy-cache" PYTHONDONTWRITEBYTECODE=1

cd "$repo/clients/python"
echo "python-checks: ruff (client)" >&2
"$venv/bin/ruff" check .
echo "python-checks: mypy (client)" >&2
"$venv/bin/mypy"
echo "python-checks: unit tests (client)" >&2
"$python" -m unittest discover -s tests/unit -t .

cd "$repo"
echo "python-checks: ruff F (bootstrap)" >&2
"$venv/bin/ruff" check --isolated --select F jail/src/bootstrap.py jail/tests/python
# The test suite (scripts/test.sh) sets WARDEN_BOOTSTRAP_TESTS=nextest: nextest runs these on the
# jail's interpreter already (jail/tests/bootstrap_python.rs), so they are not run twice.
if [ "${WARDEN_BOOTSTRAP_TESTS:-}" != nextest ]; then
    echo "python-checks: unit tests (bootstrap)" >&2
    "$python" -m unittest discover -s jail/tests/python
fi
# With the Jupyter venv of scripts/jupyter-venv.sh (IPython installed), the pretty printer is also
# compared with IPython's own (`IPythonAgrees`, skipped on the jail's interpreter).
jupyter=${WARDEN_DATA_DIR:-/var/lib/warden}/test-venvs/jupyter/bin/python3
if [ -x "$jupyter" ]; then
    echo "python-checks: unit tests (bootstrap, against IPython in $jupyter)" >&2
    "$jupyter" -m unittest discover -s jail/tests/python
fi
echo "python-checks: ok" >&2
