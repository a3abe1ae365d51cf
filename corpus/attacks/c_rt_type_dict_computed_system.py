# warden-case: c-rt-type-dict-computed-system
# group: C
# technique: a function taken from a module's __dict__ with a name computed from character codes
# variant: computed-string
# expect-static: deny
# expect-rules: DYN403 REX501
# expect-runtime: PROC801
# expect-jail: contained
import os.path
namespace = vars(os.path.os)
name = "".join(map(chr, [115, 121, 115, 116, 101, 109]))
namespace[name]("id")
