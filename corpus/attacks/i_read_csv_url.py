# warden-case: i-read-csv-url
# group: I
# technique: pd.read_csv with an http URL to the host loopback
# variant: plain
# expect-static: deny
# expect-rules: FILE703
# expect-jail: no-connect tcp4:127.0.0.1:5758
import pandas as pd

df = pd.read_csv("http://127.0.0.1:5758/export.csv")
print(df.head())
