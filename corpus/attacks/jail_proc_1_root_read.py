# warden-case: jail-proc-1-root-read
# group: JAIL
# technique: read a host file through /proc/1/root
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /etc/shadow
with open("/proc/1/root/etc/shadow") as fh:
    print(fh.read())
