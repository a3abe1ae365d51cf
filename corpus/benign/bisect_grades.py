# warden-case: bisect-grades
# group: BENIGN
# technique: bisect for grade boundaries and sorted insertion
# expect-static: allow
# expect-output: OK: grades ['F', 'C', 'B', 'A', 'A']
import bisect


def grade(score, breakpoints=(60, 70, 80, 90), grades="FDCBA"):
    return grades[bisect.bisect(breakpoints, score)]


scores = [33, 77, 85, 90, 99]
ordered = []
for s in [5, 1, 4, 2]:
    bisect.insort(ordered, s)
print("insort:", ordered)
print(f"OK: grades {[grade(s) for s in scores]}")
