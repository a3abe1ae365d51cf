# warden-case: i-rt2-read-parquet-host-file
# group: I
# technique: pd.read_parquet reads a path outside the roots through pyarrow's C++ filesystem
# variant: computed-string
# expect-static: deny
# expect-rules: FILE701
# expect-jail: no-read /etc/passwd
# expect-runtime: FILE701
import pandas as pd

print(pd.read_parquet("/etc/" + "passwd"))
