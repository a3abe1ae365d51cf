# warden-case: traceback-format-exc-log
# group: BENIGN
# technique: traceback.format_exc in an except block to log a failed row
# expect-static: allow
# expect-output: OK: 1 failure logged, total 30
import traceback

rows = ["10", "x", "20"]
total = 0
failures = []
for value in rows:
    try:
        total += int(value)
    except ValueError:
        failures.append(traceback.format_exc().strip().splitlines()[-1])
print(failures)
print(f"OK: {len(failures)} failure logged, total {total}")
