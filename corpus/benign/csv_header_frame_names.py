# warden-case: csv-header-frame-names
# group: BENIGN
# technique: a CSV whose header names equal frame attribute names
# expect-static: allow
# expect-output: OK: mean f_locals 2.0
import csv
import io

text = "f_locals,co_names\n1,a\n3,b\n"
reader = csv.DictReader(io.StringIO(text))
values = [int(row["f_locals"]) for row in reader]
print(f"OK: mean f_locals {sum(values) / len(values)}")
