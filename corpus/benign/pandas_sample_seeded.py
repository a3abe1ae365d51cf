# warden-case: pandas-sample-seeded
# group: BENIGN
# technique: reproducible sampling with random_state
# expect-static: allow
# expect-output: OK: sampled 3 of 10
import pandas as pd

df = pd.DataFrame({"id": range(10), "v": [x * x for x in range(10)]})
sample = df.sample(n=3, random_state=0)
print(sample)
print(f"OK: sampled {len(sample)} of {len(df)}")
