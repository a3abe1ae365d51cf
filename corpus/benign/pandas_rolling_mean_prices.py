# warden-case: pandas-rolling-mean-prices
# group: BENIGN
# technique: rolling window mean
# expect-static: allow
# expect-output: OK: last rolling mean 9.0
import pandas as pd

prices = pd.Series(range(1, 11), name="price", dtype="float64")
roll = prices.rolling(window=3).mean()
print(roll.round(2).tolist())
print("missing at start:", int(roll.isna().sum()))
print(f"OK: last rolling mean {roll.iloc[-1]:.1f}")
