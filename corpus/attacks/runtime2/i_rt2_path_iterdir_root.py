# warden-case: i-rt2-path-iterdir-root
# group: I
# technique: pathlib.Path.iterdir lists a host directory outside the roots
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: no-list /root
# expect-runtime: FILE701
import pathlib

print(sorted(p.name for p in pathlib.Path("/root").iterdir()))
