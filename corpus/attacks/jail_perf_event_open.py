# warden-case: jail-perf-event-open
# group: JAIL
# technique: perf_event_open syscall
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; layer seccomp
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(128)
rc = libc.syscall(298, attr, 0, -1, -1, 0)
print("perf_event_open", rc, ctypes.get_errno())
