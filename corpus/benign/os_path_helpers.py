# warden-case: os-path-helpers
# group: BENIGN
# technique: os.path helpers imported via import os.path
# expect-static: allow
# expect-output: OK: csv files ['a.csv', 'c.csv']
import os.path

names = ["a.csv", "b.txt", "c.csv", "notes.md"]
for n in names:
    with open(n, "w") as fh:
        fh.write("x\n")

csvs = [n for n in names if os.path.splitext(n)[1] == ".csv"]
joined = os.path.join("reports", "2024", "summary.csv")
print("exists:", all(os.path.exists(n) for n in names))
print("basename:", os.path.basename(joined), "dir:", os.path.dirname(joined))
print(f"OK: csv files {csvs}")
