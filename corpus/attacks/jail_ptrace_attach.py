# warden-case: jail-ptrace-attach
# group: JAIL
# technique: ptrace(PTRACE_ATTACH) through ctypes
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; layer seccomp
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
rc = libc.ptrace(16, 1, 0, 0)
print("ptrace", rc, ctypes.get_errno())
