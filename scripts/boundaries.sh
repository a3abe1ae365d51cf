#!/bin/sh
# The crate boundaries docs/architecture.md draws, checked: the corpus runner is not linked into
# `warden`; only warden-service uses an async runtime; the worker side (warden-worker) depends on
# neither the service nor tokio, axum, hyper or rmcp; the server-worker protocol (worker/src/wire.rs)
# holds no untyped JSON. Uses the lock file only (no network). Exit status 0 when every one holds.
set -eu
cd "$(dirname "$0")/.."
status=0
fail() { echo "boundaries: $*" >&2; status=1; }
tree() { cargo tree --offline --locked -p "$1" -e normal --prefix none 2>/dev/null; }

tree warden >/dev/null || { echo "boundaries: cargo tree failed for warden" >&2; exit 2; }
if tree warden | grep -q '^warden-corpus '; then
    fail "warden links warden-corpus (it must execute the warden-corpus binary instead)"
fi
for crate in warden-policy warden-jail warden-gateway warden-corpus warden-worker; do
    found=$(tree "$crate" | grep -E '^(tokio|axum|hyper|rmcp) ' | sort -u | tr '\n' ' ')
    [ -z "$found" ] || fail "$crate depends on an async runtime or server: $found"
done
if tree warden-worker | grep -q '^warden-service '; then
    fail "warden-worker depends on warden-service"
fi
if grep -nE '\bValue\b' worker/src/wire.rs | grep -v '^\s*[0-9]*:\s*//' >/dev/null; then
    fail "worker/src/wire.rs names serde_json::Value: every protocol message is a typed serde value"
    grep -nE '\bValue\b' worker/src/wire.rs >&2
fi
[ "$status" -ne 0 ] || echo "boundaries: corpus runner apart, no async runtime outside warden-service, typed worker protocol"
exit "$status"
