# warden-case: i-rt-scandir-root
# group: I
# technique: lists the root directory with os.scandir
# variant: other
# expect-static: deny
# expect-rules: FILE701
# expect-runtime: FILE701
# expect-jail: contained
import os
print([entry.name for entry in os.scandir("/")])
