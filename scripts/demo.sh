#!/usr/bin/env bash
# warden's main job on a real example: a model-style pandas program over examples/sales/sales.csv goes
# through the policy check, runs in the jail with the data stack, and comes back as a validated result
# record (JSON that satisfies examples/sales/schema.json) plus a chart file.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
# The binary setup.sh built: target/release/warden (target/debug/warden under WARDEN_PROFILE=dev, as in
# the test suite).
. scripts/lib/profile.sh
warden="$profile_dir/warden"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# --output-dir must not exist (or be empty): the program's files go to a directory inside $out.

echo "== warden run examples/sales/analysis.py (check → jail → validated result)"
"$warden" run --json \
    --input examples/sales/sales.csv \
    --schema examples/sales/schema.json \
    --output-dir "$out/files" \
    examples/sales/analysis.py | tee "$out/record.json" | python3 -m json.tool
status=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$out/record.json")
echo "status: $status; files written by the program:"
ls -l "$out/files"

echo "== the same gateway on a program that tries to escape"
printf 'import pandas as pd\npd.io.stata.os.system("id")\n' | "$warden" run - || true
[ "$status" = ok ]
