import json, os, sys
W = os.environ.get('RT_MEASURE_DIR', '/tmp/rt-measure')
sets = sys.argv[1:] or ['A-current','B-pd22','C-pd21','D-pd15']
R={s:{r['id']:r for r in map(json.loads,open(f'{W}/results/{s}-snippets.jsonl'))} for s in sets}
for s in sets: print(s, sum(r['status']=='pass' for r in R[s].values()), '/', len(R[s]))
for k in sorted(R[sets[0]]):
    st=[R[s][k]['status'] for s in sets]
    if len(set(st))>1 or st[0]!='pass':
        print(k, st)
        for s in sets:
            if R[s][k]['status']!='pass': print('   ',s, R[s][k]['tail'][:220])
