#!/usr/bin/env bash
# usage: install_set.sh NAME MODE   (MODE=net: resolve req/NAME.in from PyPI without a cache and freeze it to
# req/NAME.txt; MODE=cached: install req/NAME.txt from wheels/NAME only, --no-index). Run by measure.sh in
# $RT_MEASURE_DIR; appends "NAME MODE rc seconds size" to logs/install-times.txt.
set -u
NAME=$1; MODE=$2; W=${RT_MEASURE_DIR:-/tmp/rt-measure}
V=$W/venvs/$NAME-$MODE; rm -rf "$V"; mkdir -p "$W/venvs" "$W/logs"
export PIP_FIND_LINKS=
start=$(date +%s.%N)
/usr/bin/python3 -m venv "$V"
if [ "$MODE" = net ]; then
  "$V/bin/pip" install --no-cache-dir --only-binary=:all: -r "$W/req/$NAME.in" > "$W/logs/install-$NAME-$MODE.log" 2>&1; rc=$?
else
  "$V/bin/pip" install --no-index --find-links "$W/wheels/$NAME" --only-binary=:all: -r "$W/req/$NAME.txt" > "$W/logs/install-$NAME-$MODE.log" 2>&1; rc=$?
fi
end=$(date +%s.%N)
echo "$NAME $MODE rc=$rc seconds=$(python3 -c "print(round($end - $start, 1))") size=$(du -sh "$V" | cut -f1)" | tee -a "$W/logs/install-times.txt"
if [ "$MODE" = net ] && [ "$rc" = 0 ]; then "$V/bin/pip" freeze --all | grep -v -E '^(pip|setuptools)==' > "$W/req/$NAME.txt"; fi
