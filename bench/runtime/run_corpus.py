#!/usr/bin/env python3
"""Run benign corpus cases unconfined with a venv's python. Usage:
run_corpus.py VENV_PY OUT.jsonl [--jobs 2] [--timeout 120] [--only ds1000|humaneval|snippets]
Each case runs in a fresh temp dir (cwd) with HOME pointed at it, MPLBACKEND=Agg, no PYTHONPATH.
With --warden BIN --rules FILE [--no-policy], each case runs through `warden run --json` instead (VENV_PY is
then ignored; the runtime is the one FILE names, under $WARDEN_DATA_DIR): pass = status "ok", exit code 0
and the case's marker in stdout; the record's `stopped_by` is kept."""
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
ap.add_argument('--warden'); ap.add_argument('--rules'); ap.add_argument('--no-policy', action='store_true')
a = ap.parse_args(); a.py = os.path.abspath(a.py)
if a.warden:
    a.warden = os.path.abspath(a.warden); a.rules = os.path.abspath(a.rules)
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
        if a.warden:
            env['PATH'] = os.environ.get('PATH', '/usr/bin:/bin')
            if 'WARDEN_DATA_DIR' in os.environ:
                env['WARDEN_DATA_DIR'] = os.environ['WARDEN_DATA_DIR']
            cmd = [a.warden, 'run', '--rules', a.rules, '--json'] + (['--no-policy'] if a.no_policy else []) + [c['path']]
            p = subprocess.run(cmd, cwd=d, env=env, capture_output=True, timeout=a.timeout + 30, stdin=subprocess.DEVNULL)
            rec = json.loads(p.stdout.decode(errors='replace') or '{}')
            out = rec.get('stdout') or ''; err = (rec.get('stderr') or '') + (rec.get('message') or '')
            c = dict(c, stopped_by=rec.get('stopped_by'), record_status=rec.get('status'))
            passed = rec.get('status') == 'ok' and rec.get('exit_code') == 0 and (c['ok'] is None or c['ok'] in out)
        else:
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
