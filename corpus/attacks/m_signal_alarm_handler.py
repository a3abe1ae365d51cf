# warden-case: m-signal-alarm-handler
# group: M
# technique: SIGALRM handler runs code asynchronously
# variant: plain
# expect-static: deny
# expect-rules: IMP101 ATTR303
# expect-jail: contained; status timeout|error
import signal


def fire(signum, frame):
    frame.f_globals["__builtins__"].exec("import os; os.system('id')")


signal.signal(signal.SIGALRM, fire)
signal.alarm(1)
while True:
    pass
