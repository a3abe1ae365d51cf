# warden-case: j-rt-dict-value-module-spawn
# group: J
# technique: a module object stored as a dict value and fetched back; posix_spawn through it
# variant: container
# expect-static: deny
# expect-rules: REX501
# expect-runtime: PROC801
# expect-jail: contained
import os.path as osp
registry = {"m": osp.os}
registry["m"].posix_spawn("/bin/sh", ["sh", "-c", "id"], {})
