# warden-case: jail-proc-sys-write
# group: JAIL
# technique: write /proc/sys/kernel/core_pattern
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: unchanged /proc/sys/kernel/core_pattern
with open("/proc/sys/kernel/core_pattern", "w") as fh:
    fh.write("|/tmp/warden-escape")
