# warden-case: a-mro-walk
# group: A
# technique: reach object through str.__mro__[-1] and read /etc/shadow with popen found in a subclass's globals
# variant: plain
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: canary-unread; no-read /etc/shadow
root = "".__class__.__mro__[-1]
wrap = [c for c in root.__subclasses__() if "wrap_close" in repr(c)][0]
popen = wrap.__init__.__globals__["popen"]
print(popen("cat /etc/shadow").read())
