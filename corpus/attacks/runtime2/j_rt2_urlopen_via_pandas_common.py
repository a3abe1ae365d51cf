# warden-case: j-rt2-urlopen-via-pandas-common
# group: J
# technique: urlopen reached as pandas.io.common.urlopen
# variant: import-alias
# expect-static: allow
# expect-rules: none
# expect-jail: no-connect tcp4:127.0.0.1:5758
# expect-runtime: NET802
import pandas.io.common as common

common.urlopen("http://127.0.0.1:5758/")
