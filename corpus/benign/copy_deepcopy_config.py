# warden-case: copy-deepcopy-config
# group: BENIGN
# technique: copy vs deepcopy of nested data
# expect-static: allow
# expect-output: OK: shallow shares True, deep shares False
import copy

base = {"name": "base", "layers": [1, 2, 3], "meta": {"owner": "ana"}}
shallow = copy.copy(base)
deep = copy.deepcopy(base)
deep["layers"].append(4)
shallow["meta"]["owner"] = "ben"
print(base["meta"]["owner"], base["layers"], deep["layers"])
print(f"OK: shallow shares {shallow['layers'] is base['layers']}, deep shares {deep['layers'] is base['layers']}")
