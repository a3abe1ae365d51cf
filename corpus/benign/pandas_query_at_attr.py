# warden-case: pandas-query-at-attr
# group: BENIGN
# technique: DataFrame.query with @cfg.threshold from a settings object
# expect-static: allow
# expect-output: OK: 2 rows above 50
import pandas as pd


class Settings:
    threshold = 50


cfg = Settings()
df = pd.DataFrame({"score": [40, 55, 70]})
picked = df.query("score > @cfg.threshold")
print(f"OK: {len(picked)} rows above {cfg.threshold}")
