#!/bin/sh
# Second stage inside the guest (host root, read-only): runs the command passed on the kernel command
# line (base64 in vmtest_cmd=), prints its exit status as VMTEST_EXIT=N and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
cd /tmp
command=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^vmtest_cmd=//p' | base64 -d)
sh -c "$command" </dev/null 2>&1
echo "VMTEST_EXIT=$?"
sync
echo o > /proc/sysrq-trigger
sleep 10
