# warden-case: traceback-exception-summary
# group: BENIGN
# technique: TracebackException.from_exception for a one-line error summary
# expect-static: allow
# expect-output: OK: ValueError: bad unit 'kg2'
import traceback


def parse_unit(text):
    if text not in {"kg", "g"}:
        raise ValueError(f"bad unit {text!r}")
    return text


try:
    parse_unit("kg2")
except ValueError as error:
    summary = traceback.TracebackException.from_exception(error)
    only = "".join(summary.format_exception_only()).strip()
print(f"OK: {only}")
