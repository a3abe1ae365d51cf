# warden-case: i-pd-read-csv-passwd
# group: I
# technique: pd.read_csv('/etc/passwd', sep=':')
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /etc/passwd
import pandas as pd

users = pd.read_csv("/etc/passwd", sep=":", header=None)
print(users.to_string())
