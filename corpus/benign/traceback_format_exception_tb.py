# warden-case: traceback-format-exception-tb
# group: BENIGN
# technique: traceback.format_exception with the exception's __traceback__
# expect-static: allow
# expect-output: OK: last line is KeyError: 'price'
import traceback


def lookup(record):
    return record["price"]


try:
    lookup({"qty": 3})
except KeyError as error:
    lines = "".join(traceback.format_exception(type(error), error, error.__traceback__)).strip().splitlines()
print(f"OK: last line is {lines[-1]} ({len(lines)} lines)")
