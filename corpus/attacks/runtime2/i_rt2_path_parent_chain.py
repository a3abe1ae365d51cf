# warden-case: i-rt2-path-parent-chain
# group: I
# technique: pathlib parents walk from the working directory up to / and into /root
# variant: computed-string
# expect-static: allow
# expect-rules: none
# expect-jail: canary-unread
# expect-runtime: FILE701
import pathlib

root = pathlib.Path.cwd().parents[-1]
print((root / "root" / "warden-canary").read_text())
