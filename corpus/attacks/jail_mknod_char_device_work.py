# warden-case: jail-mknod-char-device-work
# group: JAIL
# technique: os.mknod of a character device (a copy of /dev/mem's numbers) in the work dir; seccomp refuses device nodes (and Landlock grants no device creation)
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: status error; exit-code 1; outputs-regular
import os
import stat

os.mknod("/work/mem", stat.S_IFCHR | 0o666, os.makedev(1, 1))
print("made a device node")
