# warden-case: e-rt2-builtins-via-module-graph
# group: E
# technique: exec taken from pandas' module globals' __builtins__
# variant: value-passing
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
# expect-runtime: DYN401
import pandas.io.common as common

run = common.__builtins__["exec"]
run("import os")
