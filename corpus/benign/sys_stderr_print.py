# warden-case: sys-stderr-print
# group: BENIGN
# technique: print(..., file=sys.stderr) for progress messages
# expect-static: allow
# expect-output: OK: processed 4 files
import sys

files = ["a.csv", "b.csv", "c.csv", "d.csv"]
for index, name in enumerate(files, 1):
    print(f"[{index}/{len(files)}] {name}", file=sys.stderr)
print(f"OK: processed {len(files)} files")
