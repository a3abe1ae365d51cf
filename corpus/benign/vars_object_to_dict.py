# warden-case: vars-object-to-dict
# group: BENIGN
# technique: vars(obj) to turn an object's fields into a dict for a DataFrame
# expect-static: allow
# expect-output: OK: 2 records, columns name, score
import pandas as pd


class Result:
    def __init__(self, name, score):
        self.name = name
        self.score = score


results = [Result("a", 0.9), Result("b", 0.7)]
df = pd.DataFrame([vars(r) for r in results])
print(f"OK: {len(df)} records, columns {', '.join(df.columns)}")
