# warden-case: csv-dictwriter-report
# group: BENIGN
# technique: csv DictWriter/DictReader with aggregation
# expect-static: allow
# expect-output: OK: wrote 4 rows, total hours 31
import csv
from collections import defaultdict

entries = [
    {"person": "ana", "project": "x", "hours": 8},
    {"person": "ben", "project": "y", "hours": 6},
    {"person": "ana", "project": "y", "hours": 5},
    {"person": "cy", "project": "x", "hours": 12},
]
with open("timesheet.csv", "w", newline="") as fh:
    writer = csv.DictWriter(fh, fieldnames=["person", "project", "hours"])
    writer.writeheader()
    writer.writerows(entries)

per_project = defaultdict(int)
with open("timesheet.csv", newline="") as fh:
    rows = list(csv.DictReader(fh))
for row in rows:
    per_project[row["project"]] += int(row["hours"])

print(dict(per_project))
print(f"OK: wrote {len(rows)} rows, total hours {sum(per_project.values())}")
