# warden-case: i-linecache-getline
# group: I
# technique: linecache.getline reads a file without an open() call
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: canary-unread; no-read /etc/shadow
import linecache

print(linecache.getline("/etc/shadow", 1))
