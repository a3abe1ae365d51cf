# warden-case: pandas-string-methods
# group: BENIGN
# technique: vectorised string cleaning
# expect-static: allow
# expect-output: OK: cleaned ['alice', 'bob', 'carol'] with 1 gmail
import pandas as pd

raw = pd.DataFrame({
    "name": ["  Alice ", "BOB", "Carol  "],
    "email": ["alice@gmail.com", "bob@work.org", "carol@uni.edu"],
})
raw["name"] = raw["name"].str.strip().str.lower()
gmail = raw["email"].str.contains("gmail", regex=False)
raw["domain"] = raw["email"].str.split("@").str[1]
print(raw)
print(f"OK: cleaned {raw['name'].tolist()} with {int(gmail.sum())} gmail")
