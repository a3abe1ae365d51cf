#!/usr/bin/env python3
"""Session overhead, side by side: a trivial cell (`x + 1`) through a warden session over the Unix
socket of `warden serve` against the same cell through a local Jupyter kernel via jupyter_client (no
sandbox), and the time to create a session against the time to start a kernel.

Usage (bench/sessions/run.sh runs it under the Jupyter venv's interpreter):
  bench.py --warden PATH [--rounds 5] [--cells 200] [--creates 10] [--json FILE]

One run does `--rounds` rounds. Each round starts a fresh server session and a fresh kernel, sets
`x = 1` in both, warms up (20 cells each), then runs `--cells` cells of `x + 1` alternating between
the two (warden, Jupyter, warden, ...), so both see the same machine at the same moments; then it
creates and ends `--creates` sessions and starts and stops as many kernels, alternating too. A cell's
time is the client's round trip: from sending the request to having the whole answer (warden: the
HTTP response with the cell record, on a kept-alive connection; Jupyter: the execute reply and the
kernel back to idle on iopub, with the execute_result). A session's creation is `POST /v1/sessions`
until its answer (the jailed interpreter ready for a cell); a kernel's is `start_kernel()` until
`wait_for_ready()`. Per round it reports p50 and p90; the summary gives the median over rounds of each.
"""

import argparse
import datetime
import http.client
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=120):
        super().__init__("warden", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


class Warden:
    """`warden serve` on a Unix socket in a temporary directory, spoken to over one kept-alive
    connection."""

    def __init__(self, binary, sessions):
        self.dir = tempfile.mkdtemp(prefix="warden-bench-")
        self.socket = os.path.join(self.dir, "warden.sock")
        config = os.path.join(self.dir, "serve.toml")
        with open(config, "w") as f:
            f.write(
                "[server]\n"
                f'socket = "{self.socket}"\n'
                f'state_dir = "{os.path.join(self.dir, "state")}"\n'
                "[sessions]\n"
                f"max_sessions = {sessions}\n"
                f"max_sessions_per_client = {sessions}\n"
            )
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", config, "--audit-log", "off"],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.dir, "serve.log"), "w"),
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.conn = UnixHTTPConnection(self.socket)
                self.request("GET", "/healthz")
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = open(os.path.join(self.dir, "serve.log")).read()
                    raise RuntimeError(f"warden serve did not start:\n{log}")
                time.sleep(0.1)

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        payload = response.read()
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {payload[:500]!r}")
        return json.loads(payload) if payload else None

    def create(self):
        return self.request("POST", "/v1/sessions", {})["id"]

    def execute(self, session, code):
        return self.request("POST", f"/v1/sessions/{session}/execute", {"code": code})

    def end(self, session):
        self.request("DELETE", f"/v1/sessions/{session}")

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Kernel:
    """A local ipykernel (the venv's), driven by jupyter_client over IPC sockets."""

    def __init__(self):
        from jupyter_client.manager import KernelManager

        self.dir = tempfile.mkdtemp(prefix="jupyter-bench-")
        self.km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(self.dir, "kernel"))
        self.km.start_kernel(cwd=self.dir)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def execute(self, code):
        msg_id = self.kc.execute(code, store_history=True)
        result, idle, reply = None, False, None
        while not idle:
            msg = self.kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "execute_result":
                result = msg["content"]["data"]["text/plain"]
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
        while reply is None:
            msg = self.kc.get_shell_msg(timeout=60)
            if msg["parent_header"].get("msg_id") == msg_id:
                reply = msg["content"]["status"]
        return result, reply

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def percentile(values, q):
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def ms(seconds):
    return round(seconds * 1000, 2)


def one_round(warden, cells, creates):
    session = warden.create()
    kernel = Kernel()
    try:
        assert warden.execute(session, "x = 1")["status"] == "ok"
        kernel.execute("x = 1")
        for _ in range(20):
            warden.execute(session, "x + 1")
            kernel.execute("x + 1")
        w_times, j_times = [], []
        for _ in range(cells):
            t = time.perf_counter()
            record = warden.execute(session, "x + 1")
            w_times.append(time.perf_counter() - t)
            assert record["status"] == "ok" and record["result"]["text/plain"] == "2", record
            t = time.perf_counter()
            result, status = kernel.execute("x + 1")
            j_times.append(time.perf_counter() - t)
            assert status == "ok" and result == "2", (result, status)
    finally:
        warden.end(session)
        kernel.close()
    w_create, j_create = [], []
    for _ in range(creates):
        t = time.perf_counter()
        session = warden.create()
        w_create.append(time.perf_counter() - t)
        warden.end(session)
        t = time.perf_counter()
        kernel = Kernel()
        j_create.append(time.perf_counter() - t)
        kernel.close()
    return {
        "warden_cell_ms": {"p50": ms(percentile(w_times, 0.5)), "p90": ms(percentile(w_times, 0.9))},
        "jupyter_cell_ms": {"p50": ms(percentile(j_times, 0.5)), "p90": ms(percentile(j_times, 0.9))},
        "warden_create_ms": {"p50": ms(percentile(w_create, 0.5)), "p90": ms(percentile(w_create, 0.9))},
        "jupyter_start_ms": {"p50": ms(percentile(j_create, 0.5)), "p90": ms(percentile(j_create, 0.9))},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warden", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cells", type=int, default=200)
    parser.add_argument("--creates", type=int, default=10)
    parser.add_argument("--json", help="write the rounds and the summary here")
    args = parser.parse_args()

    import ipykernel
    import jupyter_client

    warden = Warden(args.warden, sessions=4)
    rounds = []
    try:
        for n in range(args.rounds):
            r = one_round(warden, args.cells, args.creates)
            rounds.append(r)
            print(
                f"round {n + 1}: cell p50 warden {r['warden_cell_ms']['p50']} ms, jupyter "
                f"{r['jupyter_cell_ms']['p50']} ms (p90 {r['warden_cell_ms']['p90']} / "
                f"{r['jupyter_cell_ms']['p90']}); create p50 warden {r['warden_create_ms']['p50']} ms, "
                f"kernel start {r['jupyter_start_ms']['p50']} ms; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    finally:
        warden.close()

    def med(key, q):
        return round(statistics.median(r[key][q] for r in rounds), 2)

    summary = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.system()} {platform.release()}, {os.cpu_count()} cores",
        "warden": subprocess.run([args.warden, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip(),
        "ipykernel": ipykernel.__version__,
        "jupyter_client": jupyter_client.__version__,
        "rounds": args.rounds,
        "cells_per_round": args.cells,
        "creates_per_round": args.creates,
        "medians_over_rounds": {
            key: {"p50": med(key, "p50"), "p90": med(key, "p90")}
            for key in ("warden_cell_ms", "jupyter_cell_ms", "warden_create_ms", "jupyter_start_ms")
        },
    }
    m = summary["medians_over_rounds"]
    ratio = m["warden_cell_ms"]["p50"] / m["jupyter_cell_ms"]["p50"]
    summary["cell_p50_ratio_warden_to_jupyter"] = round(ratio, 2)
    print(
        f"\n{summary['date']}: {args.rounds} rounds x {args.cells} cells, {args.creates} creates; medians of the rounds"
        f"\n  `x + 1` through a warden session (HTTP, Unix socket)  p50 {m['warden_cell_ms']['p50']} ms"
        f"  p90 {m['warden_cell_ms']['p90']} ms"
        f"\n  `x + 1` through a Jupyter kernel (jupyter_client)     p50 {m['jupyter_cell_ms']['p50']} ms"
        f"  p90 {m['jupyter_cell_ms']['p90']} ms"
        f"\n  warden p50 / Jupyter p50                              {ratio:.2f}"
        f"\n  create a warden session (POST /v1/sessions)          p50 {m['warden_create_ms']['p50']} ms"
        f"  p90 {m['warden_create_ms']['p90']} ms"
        f"\n  start a Jupyter kernel (start_kernel + ready)        p50 {m['jupyter_start_ms']['p50']} ms"
        f"  p90 {m['jupyter_start_ms']['p90']} ms"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "rounds": rounds}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
