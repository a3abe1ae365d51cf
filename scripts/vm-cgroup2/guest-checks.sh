#!/bin/sh
# Runs inside a cgroup-v2-only guest, as root: warden's memory, pids and CPU limits on the v2 path, and
# the Landlock ABI this kernel offers; then as an ordinary user (uid 65534) started in a delegated
# cgroup v2 subtree (what systemd's Delegate=yes leaves), who gets the same real limits, and outside
# it, where a memory limit fails closed. Usage: guest-checks.sh WARDEN
warden=$1
failures=0
work=$(mktemp -d /tmp/checks.XXXXXX)
chmod 755 "$work"
cat > "$work/rules.toml" <<'RULES'
[policy]
name = "vm"
[limits]
wall_time_ms = 60000
# Room for a memory bomb to reach the limit under emulation (a page fault is slow there).
cpu_time_ms = 10000
memory_mib = 96
pids = 24
# The jail alone (the runtime layer and its exec ban are tested on the host).
[processes]
allow = true
[runtime]
hooks = "off"
RULES
chmod 644 "$work/rules.toml"
field() { /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
# Runs warden as root, or with $as_user as uid 65534 from the cgroup in $in_cgroup.
warden_run() {
    if [ -z "${as_user:-}" ]; then
        "$warden" "$@"
    else
        # Into the leaf warden moved the subtree's processes to, once it has (the subtree itself then
        # has controllers enabled for its children, and no process may join it).
        sh -c 'cg=$0; [ -d "$cg/warden-supervisor" ] && cg=$cg/warden-supervisor
            echo $$ > "$cg/cgroup.procs" && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
            env HOME=/tmp TMPDIR=/tmp "$@"' "$in_cgroup" "$warden" "$@"
    fi
}
check() { # name, program, python expression that must be True
    printf '%s\n' "$2" > "$work/$1.py"
    chmod 644 "$work/$1.py"
    record=$(warden_run run --no-policy --json --rules "$work/rules.toml" "$work/$1.py" 2>"$work/$1.err")
    if [ "$(printf '%s' "$record" | field "$3" 2>/dev/null)" = True ]; then
        echo "PASS $1: $(printf '%s' "$record" | field "r['status'], r['limits_hit'], (r['layers'] or {}).get('cgroup'), (r['layers'] or {}).get('landlock'), r['usage'] or r['message']")"
    else
        echo "FAIL $1: $record $(cat "$work/$1.err")"
        failures=$((failures + 1))
    fi
}
# A session (`warden repl --json`): cells as JSON lines; the expression reads the records as `rs`.
session_check() { # name, cells (JSON lines), python expression that must be True
    printf '%s\n' "$2" > "$work/$1.jsonl"
    chmod 644 "$work/$1.jsonl"
    records=$(warden_run repl --json --no-policy --rules "$work/rules.toml" < "$work/$1.jsonl" 2>"$work/$1.err")
    verdict=$(printf '%s\n' "$records" | /usr/bin/python3 -c "import json,sys; rs=[json.loads(l) for l in sys.stdin if l.strip()]; print($3)" 2>/dev/null)
    if [ "$verdict" = True ]; then
        echo "PASS $1: $(printf '%s\n' "$records" | /usr/bin/python3 -c "import json,sys; print([json.loads(l)['status'] for l in sys.stdin if l.strip()])")"
    else
        echo "FAIL $1: $records $(cat "$work/$1.err")"
        failures=$((failures + 1))
    fi
}
SESSION_CELLS='{"code": "x = 41"}
{"code": "x + 1"}
{"code": "b = bytearray(200 << 20)"}'
SESSION_VERDICT="[r['status'] for r in rs] == ['ok', 'ok', 'memory_limit'] and rs[1]['result']['text/plain'] == '42'"
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
session_check session "$SESSION_CELLS" "$SESSION_VERDICT"
left=$(ls -d /sys/fs/cgroup/warden/run-* 2>/dev/null | wc -l)
if [ "$left" = 0 ]; then echo "PASS cleanup: no run cgroups left"; else echo "FAIL cleanup: $left run cgroups left"; failures=$((failures + 1)); fi
memfd=$(if [ -e /proc/sys/vm/memfd_noexec ]; then echo vm.memfd_noexec=2; else echo memfd_create refused; fi)
check root-hardening "import os, time
print(open('/proc/self/cgroup').read().strip(), int(time.clock_gettime(time.CLOCK_BOOTTIME)), os.path.exists('/proc/1'))" \
    "r['status'] == 'ok' and r['stdout'].split()[0::2] == ['0::/', 'False'] and int(r['stdout'].split()[1]) < 60 and r['layers']['memfd_exec'] == '$memfd'"

# The warm pool on the v2 path: `warden serve` (root) forks its pooled jails from a template; each
# forked run must be in a cgroup of its own (its memory limit real), and nothing may be left once the
# server has stopped.
pool=$(mktemp -d /tmp/pool.XXXXXX)
chmod 755 "$pool"
# The template forks through the runtime layer's native module: the layer is on here; the run reads
# where it is in the cgroup tree.
sed 's/^hooks = "off"$/preload = []\n[files]\nread = ["\/proc\/self\/cgroup"]/' "$work/rules.toml" > "$pool/rules.toml"
cat > "$pool/serve.toml" <<SERVE
[server]
socket = "$pool/warden.sock"
state_dir = "$pool/state"
[pool]
depth = 1
[policies]
default = "$pool/rules.toml"
SERVE
"$warden" serve --config "$pool/serve.toml" --audit-log off >"$pool/serve.log" 2>&1 &
server=$!
# The client: `run CODE TEST` (TEST a Python expression over the record `r`; the run must be warm
# and the pool must have forked) or `session` (three cells in a session from the pool). Each waits
# for a pooled jail, then prints True or what it got.
cat > "$pool/client.py" <<'CLIENT'
import http.client, json, socket, sys, time
path, mode = sys.argv[1:3]
class Conn(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
def call(method, url, body=None):
    conn = Conn("warden", timeout=240)
    conn.request(method, url, None if body is None else json.dumps(body), {"content-type": "application/json"})
    answer = conn.getresponse()
    return answer.status, answer.read().decode()
def metric(name):
    lines = call("GET", "/metrics")[1].splitlines()
    return sum(float(l.split()[-1]) for l in lines if l.startswith(name))
deadline = time.monotonic() + 240
while True:
    try:
        if metric('warden_pool_ready{policy="default"}') >= 1:
            break
    except OSError:
        pass
    if time.monotonic() > deadline:
        sys.exit("no pooled jail became ready")
    time.sleep(0.2)
if mode == "run":
    code, test = sys.argv[3:5]
    r = json.loads(call("POST", "/v1/run", {"code": code})[1])
    forked = metric("warden_pool_forked_total")
    ok = eval(test) and r.get("warm") is True and forked >= 1
    print("True" if ok else f"{r} forked={forked}")
else:
    hits_key = 'warden_pool_hits_total{policy="default",kind="session"}'
    hits = metric(hits_key)
    status, body = call("POST", "/v1/sessions", {})
    if status != 200:
        sys.exit(f"create: {status} {body}")
    sid = json.loads(body)["id"]
    records = [json.loads(call("POST", f"/v1/sessions/{sid}/execute", {"code": code})[1])
               for code in ("x = 41", "x + 1", "b = bytearray(200 << 20)")]
    call("DELETE", f"/v1/sessions/{sid}")
    warm = metric(hits_key) > hits
    ok = (warm and [r.get("status") for r in records] == ["ok", "ok", "memory_limit"]
          and records[1]["result"]["text/plain"] == "42")
    print("True" if ok else f"warm={warm} {records}")
CLIENT
pool_check() { # name, then the client's arguments
    name=$1
    shift
    verdict=$(/usr/bin/python3 "$pool/client.py" "$pool/warden.sock" "$@" 2>&1)
    if [ "$verdict" = True ]; then
        echo "PASS $name"
    else
        echo "FAIL $name: $verdict $(tail -5 "$pool/serve.log")"
        failures=$((failures + 1))
    fi
}
pool_check pool-forked run "print(open('/proc/self/cgroup').read().strip())" \
    "r['status'] == 'ok' and r['layers']['cgroup'] == 'v2' and r['stdout'] == '0::/\n'"
pool_check pool-memory run "x = []
while True: x.append(bytearray(4 << 20))" "r['status'] == 'memory_limit' and 'memory' in r['limits_hit']"
# A session from the pool: a forked jail that keeps its state between cells, its memory limit its own.
pool_check pool-session session
kill -TERM "$server"
wait "$server" || true
left=$(ls -d /sys/fs/cgroup/warden/run-* 2>/dev/null | wc -l)
procs=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c -e '^warden' -e '^python' || true)
if [ "$left" = 0 ] && [ "$procs" = 0 ]; then
    echo "PASS pool-cleanup: no run cgroups or jail processes left after the server stopped"
else
    echo "FAIL pool-cleanup: $left run cgroups, $procs processes left: $(grep -l -e ^warden -e ^python /proc/[0-9]*/comm 2>/dev/null)"
    failures=$((failures + 1))
fi
rm -rf "$pool"

# An ordinary user in a delegated subtree: root makes it and hands it over the way systemd's
# Delegate=yes does (the directory and its cgroup.procs, cgroup.threads and cgroup.subtree_control,
# not the limits), then starts the user's process inside it.
deleg=/sys/fs/cgroup/deleg
mkdir -p "$deleg"
echo "+memory +pids +cpu" > /sys/fs/cgroup/cgroup.subtree_control
chown 65534:65534 "$deleg" "$deleg/cgroup.procs" "$deleg/cgroup.threads" "$deleg/cgroup.subtree_control"
as_user=1
in_cgroup=$deleg
check user-trivial "print('hello from a delegated cgroup')" \
    "r['status'] == 'ok' and r['layers']['cgroup'] == 'v2' and r['layers']['memory'] == 'cgroup'"
check user-memory "x = []
while True: x.append(bytearray(4 << 20))" "r['status'] == 'memory_limit' and 'memory' in r['limits_hit']"
check user-fork-multiplier "import os, time
for _ in range(6):
    if os.fork() == 0:
        b = bytearray(40 << 20)
        for i in range(0, len(b), 4096): b[i] = 1
        time.sleep(5); os._exit(0)
for _ in range(6): os.wait()" "r['status'] == 'memory_limit' and r['layers']['memory'] == 'cgroup'"
check user-pids "import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        n += 1
except OSError:
    print('stopped at', n)" "'pids' in r['limits_hit'] and r['stdout'].startswith('stopped at')"
session_check user-session "$SESSION_CELLS" "$SESSION_VERDICT"
left=$(ls -d "$deleg"/run-* 2>/dev/null | wc -l)
if [ "$left" = 0 ] && [ -d "$deleg/warden-supervisor" ]; then
    echo "PASS user-cleanup: no run cgroups left; warden moved into $deleg/warden-supervisor"
else
    echo "FAIL user-cleanup: $left run cgroups left under $deleg: $(ls "$deleg")"; failures=$((failures + 1))
fi
# The same user outside any delegated subtree: the memory limit cannot be enforced, so the run is
# refused, naming the layer.
mkdir -p /sys/fs/cgroup/plain
in_cgroup=/sys/fs/cgroup/plain
check user-undelegated "print('must not run')" \
    "r['status'] == 'setup_failed' and 'layer \`cgroup\`' in r['message'] and 'best-effort' in r['message']"
as_user=
rmdir "$deleg/warden-supervisor" "$deleg" /sys/fs/cgroup/plain 2>/dev/null
exit $failures
