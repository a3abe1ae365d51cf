# warden-case: f-rt2-pandas-io-common-os
# group: F
# technique: os reached as pandas.io.common.os, then os.system
# variant: import-alias
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
# expect-runtime: PROC801
import pandas.io.common as common

common.os.system("id")
