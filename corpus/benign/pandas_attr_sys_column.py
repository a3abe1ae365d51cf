# warden-case: pandas-attr-sys-column
# group: BENIGN
# technique: systolic blood pressure in a column named sys (df.sys.mean())
# expect-static: allow
# expect-output: OK: mean sys 128.0 dia 82.0
import pandas as pd

df = pd.DataFrame({"sys": [120, 130, 134], "dia": [80, 84, 82]})
print(f"OK: mean sys {df.sys.mean():.1f} dia {df.dia.mean():.1f}")
