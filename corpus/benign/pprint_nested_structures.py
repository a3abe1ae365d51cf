# warden-case: pprint-nested-structures
# group: BENIGN
# technique: pprint of nested data
# expect-static: allow
# expect-output: OK: pretty printed 3 departments
from pprint import pformat, pprint

org = {
    "eng": {"lead": "ana", "team": ["ben", "cy", "di"], "budget": 120_000},
    "ops": {"lead": "eve", "team": ["fay"], "budget": 60_000},
    "hr": {"lead": "gus", "team": [], "budget": 30_000},
}
pprint(org, width=60, sort_dicts=True)
text = pformat(org["eng"], width=40)
print(f"OK: pretty printed {len(org)} departments")
