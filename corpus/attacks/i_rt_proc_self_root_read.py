# warden-case: i-rt-proc-self-root-read
# group: I
# technique: reads a host file through the kernel's /proc/self/root link, under a runtime read root
# variant: other
# expect-static: deny
# expect-rules: FILE701
# expect-runtime: FILE701
# expect-jail: no-read /etc/passwd
from pathlib import Path
print(Path("/proc/self/root/etc/passwd").read_text())
