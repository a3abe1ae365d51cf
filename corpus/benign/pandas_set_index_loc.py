# warden-case: pandas-set-index-loc
# group: BENIGN
# technique: set_index and label-based lookup
# expect-static: allow
# expect-output: OK: Paris population 2.1
import pandas as pd

cities = pd.DataFrame({
    "city": ["Paris", "Lyon", "Nice"],
    "population_m": [2.1, 0.5, 0.3],
}).set_index("city")
print(cities.loc[["Lyon", "Nice"]])
print(f"OK: Paris population {cities.loc['Paris', 'population_m']}")
