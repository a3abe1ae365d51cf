# warden-case: m-sys-setprofile
# group: M
# technique: sys.setprofile hook observes calls
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import sys


def prof(frame, event, arg):
    if event == "call":
        sys.setprofile(None)
        sys.modules["os"].system("id")


sys.setprofile(prof)
len([1])
