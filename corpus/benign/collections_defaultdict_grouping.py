# warden-case: collections-defaultdict-grouping
# group: BENIGN
# technique: group records with defaultdict(list)
# expect-static: allow
# expect-output: OK: groups {'fruit': 3, 'veg': 2}
from collections import defaultdict

items = [("apple", "fruit"), ("kale", "veg"), ("pear", "fruit"), ("leek", "veg"), ("fig", "fruit")]
groups = defaultdict(list)
for name, kind in items:
    groups[kind].append(name)

for kind in sorted(groups):
    print(kind, "->", ", ".join(sorted(groups[kind])))
print(f"OK: groups {dict(sorted((k, len(v)) for k, v in groups.items()))}")
