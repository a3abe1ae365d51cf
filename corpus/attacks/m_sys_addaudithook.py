# warden-case: m-sys-addaudithook
# group: M
# technique: install an audit hook that swallows events
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import sys

sys.addaudithook(lambda event, args: None)
print("hook installed")
