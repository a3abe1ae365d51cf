#!/bin/sh
# Runs inside a cgroup-v2-only guest, as root: warden's memory, pids and CPU limits on the v2 path, and
# the Landlock ABI this kernel offers. Usage: guest-checks.sh WARDEN
warden=$1
failures=0
work=$(mktemp -d /tmp/checks.XXXXXX)
chmod 755 "$work"
cat > "$work/rules.toml" <<'RULES'
[policy]
name = "vm"
[limits]
wall_time_ms = 60000
cpu_time_ms = 4000
memory_mib = 96
pids = 24
RULES
field() { /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
check() { # name, program, python expression that must be True
    printf '%s\n' "$2" > "$work/$1.py"
    record=$("$warden" run --no-policy --json --rules "$work/rules.toml" "$work/$1.py" 2>"$work/$1.err")
    if [ "$(printf '%s' "$record" | field "$3" 2>/dev/null)" = True ]; then
        echo "PASS $1: $(printf '%s' "$record" | field "r['status'], r['limits_hit'], r['layers']['cgroup'], r['layers']['landlock'], r['usage']")"
    else
        echo "FAIL $1: $record $(cat "$work/$1.err")"
        failures=$((failures + 1))
    fi
}
echo "INFO kernel $(uname -r); cgroup: $(stat -fc %T /sys/fs/cgroup); controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "INFO doctor: $("$warden" doctor 2>&1 | tr '\n' ';')"
check trivial "print('hello from v2')" "r['status'] == 'ok' and r['layers']['cgroup'] == 'v2' and r['stdout'] == 'hello from v2\n'"
check memory "x = []
while True: x.append(bytearray(4 << 20))" "r['status'] == 'memory_limit' and 'memory' in r['limits_hit']"
check pids "import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        n += 1
except OSError:
    print('stopped at', n)" "'pids' in r['limits_hit'] and r['stdout'].startswith('stopped at')"
check cpu "while True: pass" "r['status'] == 'timeout' and 'cpu_time' in r['limits_hit']"
left=$(ls -d /sys/fs/cgroup/warden/run-* 2>/dev/null | wc -l)
if [ "$left" = 0 ]; then echo "PASS cleanup: no run cgroups left"; else echo "FAIL cleanup: $left run cgroups left"; failures=$((failures + 1)); fi
exit $failures
