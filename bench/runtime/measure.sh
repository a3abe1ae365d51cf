#!/usr/bin/env bash
# The measurement that chose the default runtime's versions (issue 12; docs/compatibility.md): candidate
# version sets of the data stack (sets/*.in), each installed into a fresh venv from /usr/bin/python3, then
# DS-1000's reference programs, HumanEval and 65 model-style snippets run UNCONFINED with each (plain venv
# python, a fresh temp dir as cwd and HOME, MPLBACKEND=Agg, one BLAS/OpenMP thread, at most 2 at once).
# Benign corpora only: never point this at attack corpora.
#
# usage: bench/runtime/measure.sh [SET...]      (default: every sets/*.in: A-current B-pd22 C-pd21 D-pd15 E-old
#        F-pd22-bridge G-pd22-np126). BigCodeBench, unconfined and through the jail: run_bigcodebench.py.
# Needs /usr/bin/python3 (3.11) with venv, PyPI, ~1 GB of disk per set, ../shared/corpora/{ds1000,humaneval}.
# Work files (venvs, wheels, frozen sets, results, logs) go to $RT_MEASURE_DIR (default /tmp/rt-measure).
# Time: ~1 min to install a set on an idle machine, ~25 min per set for the corpora on 2 cores.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export RT_MEASURE_DIR=${RT_MEASURE_DIR:-/tmp/rt-measure}
export CORPORA=${CORPORA:-$HERE/../../../shared/corpora}
W=$RT_MEASURE_DIR
mkdir -p "$W/req" "$W/wheels" "$W/results" "$W/logs" "$W/snippets"
cp "$HERE"/sets/*.in "$W/req/"
cd "$W"
if [ $# -gt 0 ]; then SETS="$*"; else SETS=$(cd "$HERE/sets" && ls ./*.in | sed 's|^\./||; s|\.in$||' | tr '\n' ' '); fi
export PIP_FIND_LINKS=
# 1. Each set: a fresh venv resolved from PyPI without a cache (timed; `pip freeze` -> req/SET.txt), then
#    the same set from downloaded wheels only (timed).
[ -d probe ] || /usr/bin/python3 -m venv probe
for s in $SETS; do
  "$HERE/install_set.sh" "$s" net
  probe/bin/pip download -q --no-deps --only-binary=:all: --python-version 3.11 -r "req/$s.txt" -d "wheels/$s"
  "$HERE/install_set.sh" "$s" cached
done
cat logs/install-times.txt
# 2. Snippets (generated) and corpora, at most 2 processes.
python3 "$HERE/make_snippets.py"
for s in $SETS; do
  python3 "$HERE/run_corpus.py" "$W/venvs/$s-net/bin/python" "results/$s-snippets.jsonl" --only snippets --timeout 150
  python3 "$HERE/run_corpus.py" "$W/venvs/$s-net/bin/python" "results/$s-corpus.jsonl" --only ds1000 --only humaneval --timeout 180
done
# 3. Tables and sizes.
python3 "$HERE/summarize_snippets.py" $SETS
python3 "$HERE/summarize_corpus.py" $SETS
du -sh venvs/*-net
