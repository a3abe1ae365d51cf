# warden-case: exceptions-try-finally
# group: BENIGN
# technique: custom exceptions, try/except/else/finally
# expect-static: allow
# expect-output: OK: parsed 3, failed 2, cleanups 5
class ParseError(ValueError):
    pass


def parse_amount(text):
    try:
        value = float(text)
    except ValueError as exc:
        raise ParseError(f"bad amount {text!r}") from exc
    if value < 0:
        raise ParseError("negative")
    return value


parsed, failed, cleanups = [], [], 0
for raw in ["12.5", "x", "3", "-1", "0.5"]:
    try:
        amount = parse_amount(raw)
    except ParseError as err:
        failed.append(str(err))
    else:
        parsed.append(amount)
    finally:
        cleanups += 1
print(failed)
print(f"OK: parsed {len(parsed)}, failed {len(failed)}, cleanups {cleanups}")
