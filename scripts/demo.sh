#!/usr/bin/env bash
# warden's main job on a real example: a model-style pandas program over examples/sales/sales.csv.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
warden=target/release/warden
echo "== warden check examples/sales/analysis.py"
"$warden" check examples/sales/analysis.py
echo "== the same gate on a program that tries to escape"
printf 'import pandas as pd\npd.io.stata.os.system("id")\n' | "$warden" check - || true
