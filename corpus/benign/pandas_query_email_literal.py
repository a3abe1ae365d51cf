# warden-case: pandas-query-email-literal
# group: BENIGN
# technique: DataFrame.query comparing with a string that contains @
# expect-static: allow
# expect-output: OK: found ops
import pandas as pd

df = pd.DataFrame({"user": ["ops", "dev"], "email": ["ops@example.com", "dev@example.com"]})
hit = df.query("email == 'ops@example.com'")
print(f"OK: found {hit['user'].iloc[0]}")
