#!/bin/sh
# Makes the Python venv tests/serve/mcp.rs drives `warden mcp` from: the official MCP client
# (PyPI `mcp`, pinned) in $WARDEN_DATA_DIR/test-venvs/mcp (default /var/lib/warden as root, else
# $XDG_DATA_HOME/warden or ~/.local/share/warden: the same data dir warden itself uses).
# Idempotent: does nothing when the venv already has the pinned version.
set -eu
MCP_VERSION="2.3.0"

. "$(dirname "$0")/lib/data-dir.sh"
venv="$data_dir/test-venvs/mcp"
stamp="$venv/.warden-mcp-version"

if [ -x "$venv/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$MCP_VERSION" ]; then
    echo "setup-mcp-test: ok ($venv, mcp $MCP_VERSION)"
    exit 0
fi
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
/usr/bin/python3 -m venv "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
"$venv/bin/python3" -c 'import mcp.client.stdio, mcp.client.session'
echo "$MCP_VERSION" >"$stamp"
echo "setup-mcp-test: installed mcp $MCP_VERSION in $venv"
