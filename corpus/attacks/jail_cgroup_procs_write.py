# warden-case: jail-cgroup-procs-write
# group: JAIL
# technique: move itself to the root cgroup
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: layer cgroup
with open("/sys/fs/cgroup/cgroup.procs", "w") as fh:
    fh.write("0")
with open("/sys/fs/cgroup/memory/cgroup.procs", "w") as fh:
    fh.write("0")
