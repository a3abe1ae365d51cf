# warden-case: i-rt2-read-csv-fileobj-fspath
# group: I
# technique: an object with __fspath__ hands pd.read_csv a host path
# variant: other
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: canary-unread
# expect-runtime: FILE701
import pandas as pd


class Where:
    def __fspath__(self):
        return "/root/warden-canary"


print(pd.read_csv(Where(), header=None))
