#!/usr/bin/env python3
"""Run benign corpus cases unconfined with a venv's python. Usage:
run_corpus.py VENV_PY OUT.jsonl [--jobs 2] [--timeout 120] [--only ds1000|humaneval|snippets]
Each case runs in a fresh temp dir (cwd) with HOME pointed at it, MPLBACKEND=Agg, no PYTHONPATH."""
import re, json, os, subprocess, sys, tempfile, time, argparse, shutil
from concurrent.futures import ThreadPoolExecutor
W = os.environ.get('RT_MEASURE_DIR', '/tmp/rt-measure')
C = os.environ.get('CORPORA', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../shared/corpora'))
SKIP_MODS = {'torch', 'tensorflow', 'gensim'}
ap = argparse.ArgumentParser()
ap.add_argument('py'); ap.add_argument('out')
ap.add_argument('--jobs', type=int, default=2); ap.add_argument('--timeout', type=int, default=120)
ap.add_argument('--only', action='append')
ap.add_argument('--section', action='append', help='DS-1000 category filter, e.g. Scipy')
a = ap.parse_args(); a.py = os.path.abspath(a.py)
cases = []
if not a.only or 'ds1000' in a.only:
    for l in open(f'{C}/ds1000/index.jsonl'):
        r = json.loads(l)
        skip = None
        if r.get('needs_network'): skip = 'needs_network'
        elif SKIP_MODS & set(r['third_party_imports']): skip = 'needs ' + ','.join(sorted(SKIP_MODS & set(r['third_party_imports'])))
        if a.section and r['category'] not in a.section: continue
        cases.append(dict(id=r['id'], corpus='ds1000', section=r['category'], path=f"{C}/ds1000/{r['file']}", ok='DS1000_STANDALONE_OK', skip=skip))
if not a.only or 'humaneval' in a.only:
    for l in open(f'{C}/humaneval/index.jsonl'):
        r = json.loads(l)
        cases.append(dict(id=r['id'], corpus='humaneval', section='HumanEval', path=f"{C}/humaneval/{r['file']}", ok=None, skip=None))
if not a.only or 'snippets' in a.only:
    sd = os.path.join(W, 'snippets')
    for f in sorted(os.listdir(sd)):
        if f.endswith('.py'):
            cases.append(dict(id=f[:-3], corpus='snippets', section='snippets', path=f'{sd}/{f}', ok='SNIPPET_OK', skip=None))

def run(c):
    if c['skip']:
        return dict(c, status='skipped', seconds=0, tail='')
    d = tempfile.mkdtemp(prefix='rtm-')
    env = {'PATH': '/usr/bin:/bin', 'HOME': d, 'MPLBACKEND': 'Agg', 'LANG': 'C.UTF-8', 'TMPDIR': d,
           'OMP_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1', 'PYTHONHASHSEED': '0'}
    t = time.time()
    try:
        p = subprocess.run([a.py, c['path']], cwd=d, env=env, capture_output=True, timeout=a.timeout, stdin=subprocess.DEVNULL)
        out = p.stdout.decode(errors='replace'); err = p.stderr.decode(errors='replace')
        passed = p.returncode == 0 and (c['ok'] is None or c['ok'] in out)
        status = 'pass' if passed else 'fail'
        tail = '' if passed else (err.strip().splitlines() or ['rc=%d' % p.returncode])[-1][:300]
        warn = sorted(set(re.findall(r'(\w+Warning): ', err)))
    except subprocess.TimeoutExpired:
        status, tail, warn = 'timeout', '', []
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return dict(c, status=status, seconds=round(time.time() - t, 2), tail=tail, warnings=warn)

t0 = time.time()
with ThreadPoolExecutor(a.jobs) as ex, open(a.out, 'w') as f:
    for r in ex.map(run, cases):
        r.pop('path', None); f.write(json.dumps(r) + '\n'); f.flush()
print(f'done {len(cases)} cases in {time.time()-t0:.0f}s', file=sys.stderr)
