# warden-case: j-rt2-signal-handler-execv
# group: J
# technique: a SIGALRM handler calls os.execv when the alarm fires
# variant: other
# expect-static: deny
# expect-rules: IMP101 DYN402 REX501
# expect-jail: contained
# expect-runtime: PROC801
import os
import sys
import time

import pandas  # noqa: F401  (loads signal)

signal = sys.modules["signal"]


def handler(signum, frame):
    os.execv("/usr/bin/id", ["id"])


signal.signal(signal.SIGALRM, handler)
signal.alarm(1)
time.sleep(3)
