# warden-case: m-signal-ignore-sigterm
# group: M
# technique: ignore SIGTERM and spin
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: status timeout; no-survivor
import signal

signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    pass
