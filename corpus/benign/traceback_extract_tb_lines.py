# warden-case: traceback-extract-tb-lines
# group: BENIGN
# technique: traceback.extract_tb names the function that failed
# expect-static: allow
# expect-output: OK: failed in divide
import traceback


def divide(a, b):
    return a / b


try:
    divide(4, 0)
except ZeroDivisionError as error:
    frames = traceback.extract_tb(error.__traceback__)
    last = frames[-1]
print(f"OK: failed in {last.name}")
