# warden-case: re-parse-logs
# group: BENIGN
# technique: regex parsing of log lines
# expect-static: allow
# expect-output: OK: 2 errors, slowest 812ms on /api/report
import re

log = """2024-05-01 10:00:01 INFO GET /api/users 120ms
2024-05-01 10:00:02 ERROR GET /api/report 812ms
2024-05-01 10:00:03 INFO POST /api/users 95ms
2024-05-01 10:00:04 ERROR GET /api/items 301ms"""

pattern = re.compile(r"^(\S+) (\S+) (?P<level>\w+) (?P<method>GET|POST) (?P<path>\S+) (?P<ms>\d+)ms$", re.M)
entries = [m.groupdict() for m in pattern.finditer(log)]
errors = [e for e in entries if e["level"] == "ERROR"]
slowest = max(entries, key=lambda e: int(e["ms"]))
print(f"parsed {len(entries)} lines")
print(f"OK: {len(errors)} errors, slowest {slowest['ms']}ms on {slowest['path']}")
