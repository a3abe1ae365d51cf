# warden-case: i-pd-read-csv-passwd
# group: I
# technique: pd.read_csv('/etc/passwd', sep=':')
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: no host file read
import pandas as pd

users = pd.read_csv("/etc/passwd", sep=":", header=None)
print(users.to_string())
