# warden-case: j-rt-reduce-getattr-popen
# group: J
# technique: functools.reduce(getattr) walks literal names from matplotlib to the subprocess module it imported, and its Popen
# variant: value-passing
# expect-static: deny
# expect-rules: ATTR304
# expect-runtime: PROC801
# expect-jail: contained
import functools
import matplotlib
popen = functools.reduce(getattr, ["subprocess", "Popen"], matplotlib)
popen(["id"]).wait()
