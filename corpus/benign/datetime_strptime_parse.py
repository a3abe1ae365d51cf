# warden-case: datetime-strptime-parse
# group: BENIGN
# technique: parse date strings with datetime.strptime and time.strptime, standard library only (the interpreter imports _strptime from C on first use)
# expect-static: allow
# expect-output: OK: 3 dates spanning 45 days, first a Wednesday, year 2024
import time
from datetime import datetime

raw = ["2024-01-03", "2024-02-17", "2024-01-20"]
dates = sorted(datetime.strptime(text, "%Y-%m-%d") for text in raw)
span = (dates[-1] - dates[0]).days
weekday = dates[0].strftime("%A")
year = time.strptime("03/01/2024", "%d/%m/%Y").tm_year
print(f"OK: {len(dates)} dates spanning {span} days, first a {weekday}, year {year}")
