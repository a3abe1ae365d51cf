# warden-case: pandas-datetime-features
# group: BENIGN
# technique: extract datetime parts
# expect-static: allow
# expect-output: OK: weekend orders 2
import pandas as pd

orders = pd.DataFrame({
    "ts": pd.to_datetime(["2024-03-01 09:15", "2024-03-02 14:00", "2024-03-03 18:30",
                          "2024-03-04 08:05", "2024-03-05 12:45"]),
    "amount": [20, 35, 15, 50, 10],
})
orders["weekday"] = orders["ts"].dt.dayofweek
orders["hour"] = orders["ts"].dt.hour
orders["weekend"] = orders["weekday"] >= 5
print(orders[["ts", "weekday", "hour", "weekend"]])
print(f"OK: weekend orders {int(orders['weekend'].sum())}")
