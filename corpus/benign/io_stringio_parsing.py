# warden-case: io-stringio-parsing
# group: BENIGN
# technique: io.StringIO as an in-memory file for csv
# expect-static: allow
# expect-output: OK: parsed 3 rows, max temp 24.5
import csv
import io

raw = """city,temp
Oslo,12.0
Rome,24.5
Lima,19.0
"""
reader = csv.DictReader(io.StringIO(raw))
rows = list(reader)
buf = io.StringIO()
writer = csv.writer(buf)
writer.writerow(["city", "temp_f"])
for r in rows:
    writer.writerow([r["city"], round(float(r["temp"]) * 9 / 5 + 32, 1)])
print(buf.getvalue().strip())
print(f"OK: parsed {len(rows)} rows, max temp {max(float(r['temp']) for r in rows)}")
