# warden-case: jail-bpf-syscall
# group: JAIL
# technique: bpf(BPF_PROG_LOAD) syscall
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; layer seccomp
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(128)
rc = libc.syscall(321, 5, attr, 128)
print("bpf", rc, ctypes.get_errno())
