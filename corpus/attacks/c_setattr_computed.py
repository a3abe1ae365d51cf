# warden-case: c-setattr-computed
# group: C
# technique: setattr with a computed name swaps json.loads for eval
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304 DYN401
# expect-jail: contained
import json

setattr(json, "lo" + "ads", eval)
json.loads("__import__('os').system('id')")
