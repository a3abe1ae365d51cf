import json, sys, os, collections
W = os.environ.get('RT_MEASURE_DIR', '/tmp/rt-measure')
sets = sys.argv[1:]
secs = ['Pandas','Numpy','Scipy','Sklearn','Matplotlib','HumanEval']
R = {}
for s in sets:
    p = s if s.endswith('.jsonl') else f'{W}/results/{s}-corpus.jsonl'
    if os.path.exists(p): R[s] = [json.loads(l) for l in open(p)]
print('| section (runnable cases) | ' + ' | '.join(R) + ' |')
print('|---|' + '---|' * len(R))
for sec in secs + ['TOTAL']:
    row = []
    n = None
    for s, rows in R.items():
        rs = [r for r in rows if (sec == 'TOTAL' or r['section'] == sec) and r['status'] != 'skipped']
        ok = sum(r['status'] == 'pass' for r in rs)
        row.append(f'{ok}/{len(rs)}')
    print(f'| {sec} | ' + ' | '.join(row) + ' |')
for s, rows in R.items():
    sk = collections.Counter(r['skip'] for r in rows if r['status'] == 'skipped')
    print(f'\n{s}: done {len(rows)} rows; skipped: {dict(sk)}')
