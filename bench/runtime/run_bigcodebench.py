#!/usr/bin/env python3
"""Run BigCodeBench tasks (../shared/corpora/bigcodebench: the canonical solution with its unittest suite)
unconfined with a runtime's python, or through `warden run` with a rules file, and write one JSON line per
task. Issue 26: the default runtime is chosen on recent model code too, and the jail must pass what the same
runtime passes unconfined. Benign corpora only.

usage:
  run_bigcodebench.py OUT.jsonl --python VENV/bin/python3            # unconfined
  run_bigcodebench.py OUT.jsonl --warden target/release/warden --rules HARNESS.toml --check-rules POLICY.toml
options: --jobs 2  --timeout 120  --all (every task; default: the data-analysis ones, whose `libs` name
pandas, numpy, scipy, sklearn, matplotlib, seaborn or statsmodels)  --every N (a sample: every Nth task)

A task's program is prompt + canonical_solution + test + `unittest.main()`; it passes when the interpreter
exits 0 (every test passed; unittest exits 1 otherwise). Unconfined: a fresh temp dir as cwd, HOME and TMPDIR,
MPLBACKEND=Agg, one BLAS/OpenMP thread (as run_corpus.py). Through warden, as DS-1000's harness is run: the
model's code (prompt + solution, without the tests) is judged by `warden check --rules POLICY` (field
`policy`: allow/deny and the denying rules), and the whole program runs with `warden run --no-policy --rules
HARNESS --json` (the jail and the runtime layer in force; HARNESS is the policy plus the test harness's own
modules, `unittest`, `numpy.testing`..., which are not model code); pass = status "ok" and exit_code 0."""
import argparse, json, os, re, shutil, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

C = os.environ.get('CORPORA', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../shared/corpora'))
DATA = {'pandas', 'numpy', 'scipy', 'sklearn', 'matplotlib', 'seaborn', 'statsmodels'}
ap = argparse.ArgumentParser()
ap.add_argument('out')
ap.add_argument('--python'); ap.add_argument('--warden'); ap.add_argument('--rules'); ap.add_argument('--check-rules')
ap.add_argument('--jobs', type=int, default=2); ap.add_argument('--timeout', type=int, default=120)
ap.add_argument('--all', action='store_true'); ap.add_argument('--every', type=int, default=1)
ap.add_argument('--ids', help='a file of task ids to run (one a line)')
a = ap.parse_args()
if a.python:
    a.python = os.path.abspath(a.python)
if a.warden:
    a.warden = os.path.abspath(a.warden)
if a.rules:
    a.rules = os.path.abspath(a.rules)
if a.check_rules:
    a.check_rules = os.path.abspath(a.check_rules)
if bool(a.python) == bool(a.warden):
    sys.exit('give exactly one of --python and --warden')
if a.warden and not (a.rules and a.check_rules):
    sys.exit('--warden needs --rules and --check-rules')

tasks = [json.loads(l) for l in open(f'{C}/bigcodebench/tasks.jsonl')]
if not a.all:
    tasks = [t for t in tasks if DATA & set(t['libs'])]
tasks = tasks[::a.every]
if a.ids:
    want = set(open(a.ids).read().split())
    tasks = [t for t in tasks if t['task_id'] in want]
progdir = tempfile.mkdtemp(prefix='bcb-programs-')


def program(t):
    path = os.path.join(progdir, 'bcb_%s.py' % t['task_id'].split('/')[-1])
    with open(path[:-3] + '_solution.py', 'w') as f:
        f.write(t['prompt'] + t['canonical_solution'] + '\n')
    with open(path, 'w') as f:
        f.write(t['prompt'] + t['canonical_solution'] + '\n\n' + t['test'] +
                "\n\nif __name__ == '__main__':\n    import unittest\n    unittest.main()\n")
    return path


def tail(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else ''


def run(t):
    path = program(t)
    d = tempfile.mkdtemp(prefix='bcb-')
    env = {'PATH': '/usr/bin:/bin', 'HOME': d, 'MPLBACKEND': 'Agg', 'LANG': 'C.UTF-8', 'TMPDIR': d,
           'OMP_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1', 'PYTHONHASHSEED': '0'}
    r = dict(id=t['task_id'], libs=t['libs'])
    start = time.time()
    try:
        if a.python:
            p = subprocess.run([a.python, path], cwd=d, env=env, capture_output=True, timeout=a.timeout,
                               stdin=subprocess.DEVNULL)
            err = p.stderr.decode(errors='replace')
            r.update(status='pass' if p.returncode == 0 else 'fail', tail='' if p.returncode == 0 else tail(err))
        else:
            env['PATH'] = os.environ.get('PATH', '/usr/bin:/bin')
            if 'WARDEN_DATA_DIR' in os.environ:
                env['WARDEN_DATA_DIR'] = os.environ['WARDEN_DATA_DIR']
            c = subprocess.run([a.warden, 'check', '--rules', a.check_rules, '--format', 'json',
                                path[:-3] + '_solution.py'], env=env, capture_output=True, timeout=60)
            verdict = json.loads(c.stdout.decode(errors='replace') or '{}')
            r['policy'] = verdict.get('decision')
            r['policy_rules'] = sorted({f.get('rule', '?') + ' ' + str(f.get('message', ''))[:90]
                                        for f in verdict.get('findings', []) if f.get('action') == 'deny'})
            p = subprocess.run([a.warden, 'run', '--no-policy', '--rules', a.rules, '--json', path], cwd=d, env=env,
                               capture_output=True, timeout=a.timeout + 30, stdin=subprocess.DEVNULL)
            rec = json.loads(p.stdout.decode(errors='replace') or '{}')
            st = rec.get('status')
            ok = st == 'ok' and rec.get('exit_code') == 0
            why = '' if ok else json.dumps(rec.get('stopped_by')) + ' ' + (
                tail(rec.get('stderr', '') or '') or str(rec.get('message', '')))[:300]
            r.update(status='pass' if ok else 'fail', record_status=st, stopped_by=rec.get('stopped_by'), tail=why)
    except subprocess.TimeoutExpired:
        r.update(status='timeout', tail='')
    except json.JSONDecodeError:
        r.update(status='fail', tail='warden printed no record')
    finally:
        shutil.rmtree(d, ignore_errors=True)
    r['seconds'] = round(time.time() - start, 2)
    return r


t0 = time.time()
with ThreadPoolExecutor(a.jobs) as ex, open(a.out, 'w') as f:
    for r in ex.map(run, tasks):
        f.write(json.dumps(r) + '\n'); f.flush()
shutil.rmtree(progdir, ignore_errors=True)
counts = {}
for l in open(a.out):
    s = json.loads(l)['status']; counts[s] = counts.get(s, 0) + 1
print(f'{len(tasks)} tasks in {time.time() - t0:.0f}s: {counts}', file=sys.stderr)
