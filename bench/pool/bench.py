#!/usr/bin/env python3
"""The warm pool (issue 15), side by side in one run, end to end over the Unix socket of
`warden serve` (HTTP request sent until the result record is parsed):

  1. `print(1)` through a pooled jail against a bare `python3 -I -c pass` started cold (the
     runtime's interpreter, no jail): goal ratio < 1.0; measured twice: as the pool refills
     after each run (the refill competes with both sides), and quiet (pool full, nothing
     refilling, before each sample of either side);
  2. a pandas program (10,000-row DataFrame, group-by, JSON printed) through a pooled jail against
     the same program run cold by the runtime's bare interpreter: goal <= 0.1x, p99 reported;
  3. throughput of that pandas program at 16 concurrent clients on 2 run slots, for a fixed time,
     pool on against pool off (every run cold);
  4. a session from the pool: `POST /v1/sessions` until the first cell (`1`) has answered, p50;
  5. density: PSS and USS of an idle pooled jail with pandas imported (its processes'
     /proc/PID/smaps_rollup), and how many fit in 1 GiB.

Warm samples wait until the pool has a jail ready (the pool refills in the background; a request
that finds it empty runs cold and is not a warm sample: each record says `warm`). Warm and cold
samples alternate, so both see the same machine at the same moments.

Usage: bench.py --warden PATH --python PATH [--samples 30] [--seconds 30] [--json FILE]
"""

import argparse
import concurrent.futures
import datetime
import http.client
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

PANDAS = """import json
import pandas as pd
df = pd.DataFrame({"k": [i % 7 for i in range(10000)], "v": range(10000)})
print(json.dumps(df.groupby("k")["v"].sum().to_dict()))
"""


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=300):
        super().__init__("warden", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


class Server:
    """`warden serve` in a temporary directory; `pool` is the `[pool]` table's text."""

    def __init__(self, binary, pool, runs=2):
        self.dir = tempfile.mkdtemp(prefix="warden-pool-bench-")
        self.socket = os.path.join(self.dir, "warden.sock")
        self.state = os.path.join(self.dir, "state")
        config = os.path.join(self.dir, "serve.toml")
        with open(config, "w") as f:
            f.write(
                f'[server]\nsocket = "{self.socket}"\nstate_dir = "{self.state}"\n'
                f"[admission]\nmax_concurrent_runs = {runs}\nqueue_size = 64\n"
                f"queue_timeout_ms = 600000\n[sessions]\nmax_sessions = 64\n"
                f"max_sessions_per_client = 64\n{pool}"
            )
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", config, "--audit-log", "off"],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.dir, "serve.log"), "w"),
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.get("/healthz")
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(open(os.path.join(self.dir, "serve.log")).read())
                time.sleep(0.1)

    def request(self, method, path, body=None, conn=None):
        own = conn is None
        conn = conn or UnixHTTPConnection(self.socket)
        data = None if body is None else json.dumps(body)
        headers = {"content-type": "application/json"} if body is not None else {}
        conn.request(method, path, data, headers)
        answer = conn.getresponse().read()
        if own:
            conn.close()
        return answer

    def get(self, path):
        return self.request("GET", path).decode()

    def run(self, code, conn=None):
        """Seconds from sending the request to the parsed record, and the record."""
        started = time.perf_counter()
        record = json.loads(self.request("POST", "/v1/run", {"code": code}, conn))
        return time.perf_counter() - started, record

    def metric(self, name):
        for line in self.get("/metrics").splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return 0.0

    def await_ready(self, limit=120):
        deadline = time.monotonic() + limit
        while self.metric('warden_pool_ready{policy="default"}') < 1:
            if time.monotonic() > deadline:
                raise RuntimeError("no pooled jail became ready")
            time.sleep(0.02)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def quantile(values, q):
    ordered = sorted(values)
    if not ordered:
        return None
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def summary(values):
    return {
        "n": len(values),
        "p50_ms": round(1000 * statistics.median(values), 2),
        "p99_ms": round(1000 * quantile(values, 0.99), 2),
        "min_ms": round(1000 * min(values), 2),
    }


def bare(python, args):
    started = time.perf_counter()
    subprocess.run([python, "-I", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def warm_against_bare(server, python, code, bare_args, samples, program_file=None):
    warm, cold = [], []
    conn = UnixHTTPConnection(server.socket)
    for _ in range(samples):
        server.await_ready()
        seconds, record = server.run(code, conn)
        if record.get("status") != "ok":
            raise RuntimeError(f"the warm run failed: {record}")
        if record.get("warm"):
            warm.append(seconds)
        cold.append(bare(python, bare_args))
    conn.close()
    return summary(warm), summary(cold)


def print1_quiet(server, python, samples, depth=2):
    """`print(1)` warm against the bare interpreter with nothing else running: before each sample
    the pool is full and no claimed worker is still ending its jail (so no refill competes with
    either side)."""

    def settle():
        deadline = time.monotonic() + 120
        while (server.metric('warden_pool_ready{policy="default"}') < depth
               or server.metric("warden_pool_busy") > 0):
            if time.monotonic() > deadline:
                raise RuntimeError("the pool did not fill")
            time.sleep(0.02)
        time.sleep(0.2)

    warm, cold = [], []
    conn = UnixHTTPConnection(server.socket)
    for _ in range(samples):
        settle()
        seconds, record = server.run("print(1)\n", conn)
        if record.get("status") != "ok":
            raise RuntimeError(f"the warm run failed: {record}")
        if record.get("warm"):
            warm.append(seconds)
        settle()
        cold.append(bare(python, ["-c", "pass"]))
    conn.close()
    return summary(warm), summary(cold)


def throughput(server, seconds, clients=16):
    """Runs completed by `clients` clients sending the pandas program back to back for `seconds`."""
    deadline = time.monotonic() + seconds

    def client(_):
        done, warm, failed = 0, 0, 0
        conn = UnixHTTPConnection(server.socket)
        while time.monotonic() < deadline:
            try:
                _, record = server.run(PANDAS, conn)
            except (OSError, http.client.HTTPException, json.JSONDecodeError):
                conn.close()
                conn = UnixHTTPConnection(server.socket)
                failed += 1
                continue
            if record.get("status") == "ok":
                done += 1
                warm += bool(record.get("warm"))
            else:
                failed += 1
        conn.close()
        return done, warm, failed

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, range(clients)))
    elapsed = time.monotonic() - started
    done = sum(r[0] for r in results)
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "runs": done,
        "warm_runs": sum(r[1] for r in results),
        "failed": sum(r[2] for r in results),
        "runs_per_s": round(done / elapsed, 2),
    }


def session_ready(server, samples):
    times = []
    for _ in range(samples):
        server.await_ready()
        started = time.perf_counter()
        created = json.loads(server.request("POST", "/v1/sessions", {}))
        cell = json.loads(
            server.request("POST", f"/v1/sessions/{created['id']}/execute", {"code": "1"})
        )
        times.append(time.perf_counter() - started)
        if cell.get("status") != "ok":
            raise RuntimeError(f"the first cell failed: {cell}")
        server.request("DELETE", f"/v1/sessions/{created['id']}")
    return summary(times)


def smaps(pid):
    fields = {}
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                fields[parts[0].rstrip(":")] = int(parts[1]) * 1024
    except OSError:
        pass
    return fields


def children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            found += [int(p) for p in open(f"/proc/{pid}/task/{task}/children").read().split()]
    except OSError:
        pass
    return found


def subtree(pid):
    """PSS, USS and process count of `pid` and every process below it."""
    todo, total = [pid], {"pss": 0, "uss": 0, "processes": 0}
    while todo:
        current = todo.pop()
        fields = smaps(current)
        total["pss"] += fields.get("Pss", 0)
        total["uss"] += fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
        total["processes"] += 1
        todo += children(current)
    return total


def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        return []


def density(server):
    """PSS/USS of each idle pooled jail (its init and interpreter), apart the `warden
    session-worker` that holds it; with the template step, the jails are the template's children
    (each forked from it, sharing its preloaded pages), and the template is reported on its own."""
    server.await_ready()
    time.sleep(3)
    workers = [int(pid) for pid in os.listdir("/proc") if pid.isdigit()
               and (lambda c: b"session-worker" in c and any(server.state.encode() in a for a in c))(
                   cmdline(pid))]
    jails, template = [], None
    for worker in workers:
        below = children(worker)
        own = smaps(worker)
        worker_pss = own.get("Pss", 0)
        worker_uss = own.get("Private_Clean", 0) + own.get("Private_Dirty", 0)
        interpreter = None
        todo = list(below)
        while todo:
            pid = todo.pop()
            if any(b"--template" == a for a in cmdline(pid)):
                # The template (its forks show the same command line: not below it).
                interpreter = pid
                continue
            todo += children(pid)
        if interpreter is not None:
            forked = children(interpreter)
            template = subtree(worker)
            for init in forked:
                template_part = subtree(init)
                for key in ("pss", "uss", "processes"):
                    template[key] -= template_part[key]
                jails.append(dict(template_part, worker_pss=0, worker_uss=0))
            template["worker_pss"], template["worker_uss"] = worker_pss, worker_uss
        elif below:
            jail = {"pss": 0, "uss": 0, "processes": 0}
            for pid in below:
                for key, value in subtree(pid).items():
                    jail[key] += value
            jails.append(dict(jail, worker_pss=worker_pss, worker_uss=worker_uss))
        else:
            # A forked jail's worker: its jail is the template's child (measured there).
            for jail in jails:
                if jail["worker_pss"] == 0:
                    jail["worker_pss"], jail["worker_uss"] = worker_pss, worker_uss
                    break
            else:
                jails.append({"pss": 0, "uss": 0, "processes": 0,
                              "worker_pss": worker_pss, "worker_uss": worker_uss, "pending": True})
    jails = [j for j in jails if j["processes"]]
    if not jails:
        return {}
    pss = statistics.median(j["pss"] + j["worker_pss"] for j in jails)
    uss = statistics.median(j["uss"] + j["worker_uss"] for j in jails)
    result = {
        "jails_measured": len(jails),
        "forked_from_template": template is not None,
        "jail_pss_mib": round(statistics.median(j["pss"] for j in jails) / 2**20, 1),
        "jail_uss_mib": round(statistics.median(j["uss"] for j in jails) / 2**20, 1),
        "with_worker_pss_mib": round(pss / 2**20, 1),
        "with_worker_uss_mib": round(uss / 2**20, 1),
        "per_gib_by_pss": int(2**30 // pss) if pss else None,
        "per_gib_by_uss": int(2**30 // uss) if uss else None,
    }
    if template is not None:
        result["template_pss_mib"] = round(template["pss"] / 2**20, 1)
        result["template_uss_mib"] = round(template["uss"] / 2**20, 1)
        result["template_worker_pss_mib"] = round(template["worker_pss"] / 2**20, 1)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--warden", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--json")
    args = parser.parse_args()
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.release()}",
        "samples": args.samples,
    }
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(PANDAS)
        program = f.name
    server = Server(args.warden, "[pool]\ndepth = 2\n")
    try:
        server.await_ready()
        for _ in range(3):
            server.await_ready()
            server.run("print(1)")
        warm, cold = warm_against_bare(
            server, args.python, "print(1)\n", ["-c", "pass"], args.samples
        )
        results["print1"] = {"warm": warm, "bare_python": cold,
                             "ratio_p50": round(warm["p50_ms"] / cold["p50_ms"], 2)}
        warm, cold = print1_quiet(server, args.python, args.samples)
        results["print1_quiet"] = {"warm": warm, "bare_python": cold,
                                   "ratio_p50": round(warm["p50_ms"] / cold["p50_ms"], 2)}
        warm, cold = warm_against_bare(server, args.python, PANDAS, [program], args.samples)
        results["pandas"] = {"warm": warm, "bare_python": cold,
                             "ratio_p50": round(warm["p50_ms"] / cold["p50_ms"], 3)}
        results["session_ready"] = session_ready(server, max(10, args.samples // 2))
        results["density"] = density(server)
        counters = ("hits_total", "misses_total", "forked_on_miss_total", "forked_total",
                    "workers_reused_total", "refills_total")

        def pool_counters():
            text = server.get("/metrics")
            found = {}
            for name in counters:
                prefix = f"warden_pool_{name}{{policy=\"default\""
                found[name] = sum(float(line.split()[-1]) for line in text.splitlines()
                                  if line.startswith(prefix))
            return found

        before = pool_counters()
        results["throughput_pool"] = throughput(server, args.seconds)
        after = pool_counters()
        # What the pool did during the load (hits: pooled jails claimed; workers_reused: jails
        # started by a worker back from an earlier run rather than a new worker process).
        results["throughput_pool"]["pool"] = {
            name: int(after[name] - before[name]) for name in counters
        }
    finally:
        server.stop()
    server = Server(args.warden, "[pool]\nenabled = false\n")
    try:
        results["throughput_cold"] = throughput(server, args.seconds)
    finally:
        server.stop()
        os.unlink(program)
    results["throughput_ratio"] = round(
        results["throughput_pool"]["runs_per_s"] / max(results["throughput_cold"]["runs_per_s"], 1e-9), 2
    )
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
