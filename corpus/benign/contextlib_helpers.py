# warden-case: contextlib-helpers
# group: BENIGN
# technique: contextlib.contextmanager and suppress
# expect-static: allow
# expect-output: OK: events ['open', 'work', 'close'], suppressed True
from contextlib import contextmanager, suppress

events = []


@contextmanager
def session(name):
    events.append("open")
    try:
        yield name.upper()
    finally:
        events.append("close")


with session("db") as handle:
    events.append("work")

reached = False
with suppress(KeyError):
    {}["missing"]
    reached = True
suppressed = not reached
print("handle:", handle)
print(f"OK: events {events}, suppressed {suppressed}")
