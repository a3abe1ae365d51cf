# warden-case: k-regex-catastrophic
# group: K
# technique: catastrophic regex backtracking
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status timeout
import re

pattern = re.compile(r"^(a+)+$")
print(pattern.match("a" * 64 + "b"))
