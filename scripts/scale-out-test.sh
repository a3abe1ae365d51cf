#!/usr/bin/env bash
# Scale-out, tested on one machine (docs/scale-out.md, "What was tested here"): three `warden serve`
# nodes, each with its own TCP port on 127.0.0.1, socket, state directory and WARDEN_NODE, behind
# HAProxy configured by deploy/haproxy/warden.cfg as it is, driven through the router by the
# Python client (clients/python). It checks that:
#   1. sessions created through the router name their node and keep their state across cells;
#   2. runs spread over the three nodes;
#   3. a node killed (SIGKILL) while runs are in flight: its sessions answer 410 session_lost
#      through the router within FAILOVER_BOUND_S, the client raises SessionGone(state_lost=True),
#      every run still succeeds (0 lost), new sessions go to the live nodes, the other sessions
#      keep their state;
#   4. the node restarted on its state directory rejoins (runs reach it again within
#      REJOIN_BOUND_S) and answers 410 itself for the sessions of its earlier life;
#   5. nothing is left behind: no process, no run cgroup of the nodes, no directory.
# Loopback only; bounded (the driver stops at DEADLINE_S). Prints the measured failover and rejoin
# times and the lost runs. Needs root (the jail), haproxy (scripts/setup.sh installs it), and
# target/debug/warden with libwarden_hook.so beside it (or WARDEN_BIN).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
warden="${WARDEN_BIN:-$repo/target/debug/warden}"
FAILOVER_BOUND_S="${FAILOVER_BOUND_S:-3}"
REJOIN_BOUND_S="${REJOIN_BOUND_S:-10}"
DEADLINE_S="${DEADLINE_S:-150}"

[ "$(id -u)" -eq 0 ] || { echo "scale-out-test: run as root (the jail needs it)" >&2; exit 2; }
command -v haproxy >/dev/null || { echo "scale-out-test: haproxy is missing (scripts/setup.sh installs it)" >&2; exit 2; }
[ -x "$warden" ] || { echo "scale-out-test: no $warden (cargo build -p warden -p warden-hook)" >&2; exit 2; }

# The Kubernetes router (deploy/kubernetes/06-router.yaml) carries this same configuration.
embedded="$(awk '/^  warden.cfg: [|]$/ {on = 1; next} on && /^---$/ {exit} on {sub(/^    /, ""); print}' \
    "$repo/deploy/kubernetes/06-router.yaml")"
if [ "$embedded" != "$(cat "$repo/deploy/haproxy/warden.cfg")" ]; then
    echo "scale-out-test: deploy/kubernetes/06-router.yaml's warden.cfg differs from deploy/haproxy/warden.cfg" >&2
    exit 1
fi

work="$(mktemp -d /tmp/warden-scale-out-XXXXXX)"
mkdir -p "$work/pids"
# Everything this script starts records its pid in $work/pids; the trap ends exactly those (and
# waits for them), on success, failure or interrupt, then removes the directory.
cleanup() {
    status=$?
    trap - EXIT INT TERM
    for file in "$work"/pids/*; do
        [ -e "$file" ] || continue
        pid="$(cat "$file")"
        kill -TERM "$pid" 2>/dev/null || true
    done
    for file in "$work"/pids/*; do
        [ -e "$file" ] || continue
        pid="$(cat "$file")"
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    if [ "$status" -ne 0 ] && [ -d "$work" ]; then
        for log in "$work"/*.log; do
            [ -e "$log" ] || continue
            echo "--- $log (last lines)" >&2
            tail -n 20 "$log" >&2
        done
    fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT INT TERM

# Four free loopback ports: the router's and one per node (fixed, so that a restarted node is
# where the router's configuration says).
read -r router_port port_1 port_2 port_3 < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(4)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
token="scale-out-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
token_sha="$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)"
for n in 1 2 3; do
    port_var="port_$n"
    mkdir -p "$work/node-$n"
    cat >"$work/node-$n/serve.toml" <<EOF
[server]
socket = "$work/node-$n/warden.sock"
tcp = "127.0.0.1:${!port_var}"
state_dir = "$work/node-$n/state"
audit_log = "$work/node-$n/audit.jsonl"
default_policy = "default"

[admission]
max_concurrent_runs = 2
queue_size = 16
queue_timeout_ms = 30000
shutdown_grace_ms = 5000

[sessions]
max_sessions = 6
max_sessions_per_client = 6

[pool]
enabled = false

[policies]
default = "builtin"

[[tokens]]
name = "scale-out"
sha256 = "$token_sha"
policies = ["default"]
EOF
done

export WARDEN="$warden" WORK="$work" TOKEN="$token" ROUTER_PORT="$router_port" REPO="$repo"
export FAILOVER_BOUND_S REJOIN_BOUND_S DEADLINE_S
export PYTHONPATH="$repo/clients/python" PYTHONDONTWRITEBYTECODE=1
timeout --kill-after=10 "$((DEADLINE_S + 20))" python3 - <<'PY'
import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
import http.client

import warden_client
from warden_client import errors

WORK, WARDEN, TOKEN = os.environ["WORK"], os.environ["WARDEN"], os.environ["TOKEN"]
REPO = os.environ["REPO"]
ROUTER = f"127.0.0.1:{os.environ['ROUTER_PORT']}"
FAILOVER_BOUND = float(os.environ["FAILOVER_BOUND_S"])
REJOIN_BOUND = float(os.environ["REJOIN_BOUND_S"])
DEADLINE = time.monotonic() + float(os.environ["DEADLINE_S"])
NODES = ["node-1", "node-2", "node-3"]
seen_pids = set()


def log(message):
    print(f"scale-out: {message}", flush=True)


def check(condition, message):
    if not condition:
        raise SystemExit(f"scale-out: FAILED: {message}")


def remaining():
    left = DEADLINE - time.monotonic()
    check(left > 0, "the test ran past its deadline")
    return left


def record_pid(name, pid):
    with open(os.path.join(WORK, "pids", name), "w") as f:
        f.write(str(pid))


def forget_pid(name):
    try:
        os.unlink(os.path.join(WORK, "pids", name))
    except FileNotFoundError:
        pass


def descendants(pid):
    children = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children[ppid].append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def note_pids(procs):
    for proc in procs.values():
        if proc.poll() is None:
            seen_pids.add(proc.pid)
            seen_pids.update(descendants(proc.pid))


def start_node(n):
    name = f"node-{n}"
    env = dict(os.environ, WARDEN_NODE=name)
    logfile = open(os.path.join(WORK, f"{name}.log"), "a")
    proc = subprocess.Popen(
        [WARDEN, "serve", "--config", os.path.join(WORK, name, "serve.toml")],
        env=env, stdin=subprocess.DEVNULL, stdout=logfile, stderr=subprocess.PIPE, text=True,
    )
    record_pid(name, proc.pid)
    first = proc.stderr.readline()
    check("serving on" in first, f"{name} did not start: {first}{proc.stderr.read() if proc.poll() is not None else ''}")
    addr = first.split("tcp:", 1)[1].split(",")[0].split(" ")[0].strip()
    # The rest of its stderr goes to its log.
    threading.Thread(target=lambda: [logfile.write(line) for line in proc.stderr], daemon=True).start()
    return proc, addr


def raw(method, path, body=None, timeout=60):
    conn = http.client.HTTPConnection(ROUTER, timeout=timeout)
    try:
        headers = {"Authorization": f"Bearer {TOKEN}", "Connection": "close"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = conn.getresponse()
        return response.status, response.getheader("X-Warden-Node"), response.read()
    finally:
        conn.close()


def node_of(session):
    return session.id.split(".", 1)[1]


# --- the nodes and the router ---------------------------------------------------------------------
procs, addrs = {}, {}
for n in (1, 2, 3):
    procs[f"node-{n}"], addrs[f"node-{n}"] = start_node(n)
env = dict(os.environ, WARDEN_ROUTER_BIND=ROUTER)
for n in (1, 2, 3):
    env[f"WARDEN_NODE_{n}"] = f"node-{n}"
    env[f"WARDEN_ADDR_{n}"] = addrs[f"node-{n}"]
router_cfg = os.path.join(REPO, "deploy/haproxy/warden.cfg")
checked = subprocess.run(["haproxy", "-c", "-q", "-f", router_cfg], env=env, capture_output=True, text=True)
check(checked.returncode == 0, f"haproxy refuses {router_cfg}: {checked.stderr}")
router = subprocess.Popen(
    ["haproxy", "-db", "-f", router_cfg], env=env, stdin=subprocess.DEVNULL,
    stdout=open(os.path.join(WORK, "haproxy.log"), "w"), stderr=subprocess.STDOUT,
)
record_pid("haproxy", router.pid)
client = warden_client.Client(f"http://{ROUTER}", token=TOKEN, max_retries=4)
while True:
    remaining()
    try:
        if all(raw("GET", "/healthz", timeout=2)[0] == 200 for _ in range(3)):
            break
    except OSError:
        pass
    time.sleep(0.1)
time.sleep(1.2)  # every node's first health checks (rise 2 at 500 ms)
log(f"3 nodes at {', '.join(addrs[n] for n in NODES)} behind haproxy at {ROUTER}")

# --- 1. sessions through the router: one on each node, state kept across cells --------------------
sessions = {}
for _ in range(9):
    session = client.session()
    named = node_of(session)
    check(named in NODES, f"the id {session.id} names no node")
    if named in sessions:
        session.close()
        continue
    sessions[named] = session
    if len(sessions) == 3:
        break
check(sorted(sessions) == NODES, f"new sessions reached only {sorted(sessions)}")
for named, session in sessions.items():
    session.execute(f"where = {named!r}\ncount = 1")
    session.execute("count += 1")
    cell = session.execute("(where, count)")
    check(cell.result_text == repr((named, 2)), f"{named}: state not kept: {cell.raw}")
note_pids(procs)
log("1. a session on each node keeps its state across cells through the router: ok")

# --- 2. runs spread over the nodes -----------------------------------------------------------------
spread = collections.Counter()
for _ in range(6):
    status, answered, body = raw("POST", "/v1/run", {"code": "print(6 * 7)"})
    check(status == 200 and json.loads(body)["stdout"] == "42\n", f"a run failed: {status} {body[:300]!r}")
    spread[answered] += 1
check(sorted(spread) == NODES, f"runs reached only {dict(spread)}")
log(f"2. runs spread over the nodes: {dict(sorted(spread.items()))}: ok")

# --- 3. a node killed while runs are in flight -----------------------------------------------------
victim = "node-2"
results, failures = [], []


def run_one(i):
    try:
        record = client.run(f"import time\ntime.sleep(1.0)\nprint('run {i}')")
        if record.ok and record.stdout == f"run {i}\n":
            results.append(i)
        else:
            failures.append((i, record.raw))
    except errors.WardenError as exc:
        failures.append((i, repr(exc)))


in_flight = [threading.Thread(target=run_one, args=(i,)) for i in range(6)]
for thread in in_flight:
    thread.start()
time.sleep(0.6)  # the runs are in their jails, two of them on the victim
note_pids(procs)
procs[victim].send_signal(signal.SIGKILL)
killed_at = time.monotonic()
procs[victim].wait()
forget_pid(victim)
log(f"3. {victim} killed (SIGKILL) with runs in flight")
# Its session answers 410 session_lost through the router.
lost_after = None
before_410 = collections.Counter()
while lost_after is None:
    remaining()
    try:
        sessions[victim].execute("where")
        check(time.monotonic() - killed_at < FAILOVER_BOUND, f"{victim}'s session still answers")
    except errors.SessionGone as exc:
        lost_after = time.monotonic() - killed_at
        check(exc.status == 410 and exc.code == "session_lost" and exc.state_lost, f"not session_lost: {exc!r}")
        check(victim in exc.message and "start a new session" in exc.message, exc.message)
    except errors.WardenError as exc:
        check(time.monotonic() - killed_at < FAILOVER_BOUND, f"{victim}'s session: {exc!r}")
        before_410[f"{type(exc).__name__} {exc.status or ''}".strip()] += 1
        time.sleep(0.05)
check(lost_after <= FAILOVER_BOUND, f"410 after {lost_after:.2f} s, over {FAILOVER_BOUND} s")
# More runs while the router still learns the node is gone, then the in-flight ones.
for i in range(6, 12):
    run_one(i)
for thread in in_flight:
    thread.join(remaining())
check(not failures, f"runs lost: {failures}")
check(sorted(results) == list(range(12)), f"runs missing: {sorted(results)}")
log(f"3. {victim}'s session: 410 session_lost through the router {lost_after:.2f} s after the kill "
    f"(bound {FAILOVER_BOUND} s; before it: {dict(before_410) or 'nothing'}); runs: 12 of 12 succeeded, 0 lost "
    f"(6 in flight at the kill, client retries {client.retried})")
fresh = []
for _ in range(4):
    session = client.session()
    check(node_of(session) in NODES and node_of(session) != victim, f"a new session went to {session.id}")
    check(session.execute("1 + 1").result_text == "2", "a new session does not run")
    fresh.append(session)
for session in fresh:
    session.close()
for named in ("node-1", "node-3"):
    cell = sessions[named].execute("(where, count)")
    check(cell.result_text == repr((named, 2)), f"{named} lost its state: {cell.raw}")
log(f"3. new sessions went to {sorted({node_of(s) for s in fresh})}; the other sessions kept their state: ok")

# --- 4. the node restarted rejoins -------------------------------------------------------------------
procs[victim], _ = start_node(2)
restarted_at = time.monotonic()
rejoined_after = None
while rejoined_after is None:
    check(time.monotonic() - restarted_at < REJOIN_BOUND, f"{victim} did not rejoin within {REJOIN_BOUND} s")
    remaining()
    status, answered, body = raw("POST", "/v1/run", {"code": "print('back')"})
    check(status == 200, f"a run failed while {victim} rejoined: {status} {body[:300]!r}")
    if answered == victim:
        rejoined_after = time.monotonic() - restarted_at
# The restarted node itself now answers for its lost session: 410 from warden, through the router.
# The router checks the node once per backend ("any" for runs, its own for its sessions): the second
# may see it up a health check (500 ms) after the first, and answers 410 itself until then.
while True:
    status, answered, body = raw("GET", f"/v1/sessions/{sessions[victim].id}")
    if answered == victim or time.monotonic() - restarted_at > REJOIN_BOUND:
        break
    time.sleep(0.1)
error = json.loads(body).get("error", {})
check(status == 410 and answered == victim and error.get("code") == "session_lost"
      and "restarted" in error.get("message", ""), f"the restarted node answered {status} {body!r}")
note_pids(procs)
log(f"4. {victim} restarted: runs reach it again {rejoined_after:.2f} s after its start "
    f"(bound {REJOIN_BOUND} s); it answers 410 session_lost itself for its earlier life: ok")

# --- 5. nothing left behind --------------------------------------------------------------------------
for named in ("node-1", "node-3"):
    sessions[named].close()
router.terminate()
router.wait(timeout=remaining())
forget_pid("haproxy")
for named, proc in procs.items():
    proc.terminate()
for named, proc in procs.items():
    proc.wait(timeout=remaining())
    forget_pid(named)
def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


leftover = [pid for pid in seen_pids if WORK in cmdline(pid)]
check(not leftover, f"processes left behind: {leftover}")
owners = {f"run-{pid}-" for pid in seen_pids}
stray = []
for root, dirs, _ in os.walk("/sys/fs/cgroup"):
    stray += [os.path.join(root, d) for d in dirs if any(d.startswith(o) for o in owners)]
    if root.count("/") >= 8:
        dirs[:] = []
check(not stray, f"run cgroups left behind: {stray}")
log(f"5. nodes and router stopped; no process or run cgroup of theirs left ({len(seen_pids)} pids watched): ok")
print(json.dumps({"failover_410_s": round(lost_after, 3), "failover_bound_s": FAILOVER_BOUND,
                  "before_410": dict(before_410),
                  "runs": 12, "runs_lost": 0, "client_retries": client.retried,
                  "rejoin_s": round(rejoined_after, 3), "spread": dict(spread)}))
PY
status=$?
[ "$status" -eq 0 ] && echo "scale-out-test: all checks passed" >&2
exit "$status"
