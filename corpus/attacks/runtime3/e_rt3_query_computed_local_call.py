# warden-case: e-rt3-query-computed-local-call
# group: E
# technique: DataFrame.query with a string built at run time that calls a local through @name (pandas' evaluator calls whatever it resolves)
# variant: computed-string
# expect-static: deny
# expect-rules: STR601
# expect-jail: contained
# expect-runtime: DYN401
import pandas as pd

frame = pd.DataFrame({"x": [1]})
writer = open
frame.query("@writer" + "".join(["(", "'/work/PW", "NED', 'w')"]))
