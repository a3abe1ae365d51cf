# warden-case: mpl-pandas-plot
# group: BENIGN
# technique: DataFrame.plot on the Agg backend
# expect-static: allow
# expect-output: OK: saved pandas_plot.png
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

df = pd.DataFrame({
    "day": pd.date_range("2024-05-01", periods=7, freq="D"),
    "temp": [18, 20, 19, 23, 25, 24, 22],
    "rain": [0, 2, 5, 0, 0, 1, 3],
}).set_index("day")
ax = df.plot(secondary_y="rain", figsize=(7, 4), title="Weather")
ax.figure.savefig("pandas_plot.png")
plt.close("all")
print("hottest day:", df["temp"].idxmax().date())
print("OK: saved pandas_plot.png")
