# warden-case: traceback-print-exc-stderr
# group: BENIGN
# technique: traceback.print_exc prints the traceback to stderr and the program continues
# expect-static: allow
# expect-output: OK: continued after ZeroDivisionError
import traceback


def ratio(a, b):
    return a / b


try:
    ratio(1, 0)
except ZeroDivisionError as error:
    traceback.print_exc()
    name = type(error).__name__
print(f"OK: continued after {name}")
