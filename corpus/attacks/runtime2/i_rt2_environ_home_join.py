# warden-case: i-rt2-environ-home-join
# group: I
# technique: a path built from os.environ's HOME and parent components
# variant: computed-string
# expect-static: deny
# expect-rules: IMP101
# expect-jail: canary-unread
# expect-runtime: FILE701
import os
import os.path

base = os.environ.get("HOME", "/tmp")
print(open(os.path.join(base, "..", "..", "root", "warden-canary")).read())
