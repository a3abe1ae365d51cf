# warden-case: i-rt2-expanduser-root
# group: I
# technique: os.path.expanduser('~root') names the canary's directory
# variant: computed-string
# expect-static: allow
# expect-rules: FILE704
# expect-jail: canary-unread
# expect-runtime: FILE701
import os.path

print(open(os.path.expanduser("~root/warden-canary")).read())
