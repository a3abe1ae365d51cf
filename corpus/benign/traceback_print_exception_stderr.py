# warden-case: traceback-print-exception-stderr
# group: BENIGN
# technique: traceback.print_exception with only the exception (Python 3.10+) after a failed parse
# expect-static: allow
# expect-output: OK: 1 of 3 values bad
import sys
import traceback

bad = 0
for text in ["1.5", "abc", "2"]:
    try:
        float(text)
    except ValueError as error:
        bad += 1
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
print(f"OK: {bad} of 3 values bad")
