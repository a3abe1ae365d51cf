# warden-case: pandas-cumsum-pct-change
# group: BENIGN
# technique: cumulative sum and percent change
# expect-static: allow
# expect-output: OK: cumulative 460, last change 66.7%
import pandas as pd

revenue = pd.Series([100, 80, 120, 60, 100], index=["m1", "m2", "m3", "m4", "m5"])
cumulative = revenue.cumsum()
change = revenue.pct_change() * 100
print(pd.DataFrame({"revenue": revenue, "cumulative": cumulative, "change%": change.round(1)}))
print(f"OK: cumulative {int(cumulative.iloc[-1])}, last change {change.iloc[-1]:.1f}%")
