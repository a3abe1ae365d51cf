# warden-case: datetime-date-ranges
# group: BENIGN
# technique: date arithmetic and formatting
# expect-static: allow
# expect-output: OK: 2024-02-29 is a Thursday, 60 days into the year
from datetime import date, datetime, timedelta

leap_day = date(2024, 2, 29)
day_of_year = leap_day.timetuple().tm_yday
deadline = datetime(2024, 3, 1, 17, 30) + timedelta(days=10, hours=2)
weeks = [(date(2024, 1, 1) + timedelta(weeks=i)).isoformat() for i in range(3)]
print("deadline:", deadline.strftime("%Y-%m-%d %H:%M"))
print("mondays:", weeks)
print(f"OK: {leap_day.isoformat()} is a {leap_day.strftime('%A')}, {day_of_year} days into the year")
