# warden-case: sys-argv-default
# group: BENIGN
# technique: reads sys.argv with a default when no argument is given
# expect-static: allow
# expect-output: OK: using default input data.csv
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "data.csv"
print(f"OK: using default input {path}")
