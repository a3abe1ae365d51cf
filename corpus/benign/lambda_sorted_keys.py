# warden-case: lambda-sorted-keys
# group: BENIGN
# technique: sorted with lambda and multi-key sorting
# expect-static: allow
# expect-output: OK: ranking ['cy', 'ana', 'ben', 'di']
people = [
    {"name": "ana", "score": 90, "age": 30},
    {"name": "ben", "score": 85, "age": 25},
    {"name": "cy", "score": 90, "age": 22},
    {"name": "di", "score": 70, "age": 40},
]
ranking = sorted(people, key=lambda p: (-p["score"], p["age"]))
by_len = sorted(["pear", "fig", "banana"], key=len)
print("by length:", by_len)
print(f"OK: ranking {[p['name'] for p in ranking]}")
