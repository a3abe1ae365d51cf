# warden-case: calendar-month-stats
# group: BENIGN
# technique: calendar module: weekdays and leap years
# expect-static: allow
# expect-output: OK: 4 leap years in 2000-2015, Feb 2024 has 29 days
import calendar

leaps = [y for y in range(2000, 2016) if calendar.isleap(y)]
first_weekday, days = calendar.monthrange(2024, 2)
print("first weekday of Feb 2024:", calendar.day_name[first_weekday])
print(calendar.month(2024, 2))
print(f"OK: {len(leaps)} leap years in 2000-2015, Feb 2024 has {days} days")
