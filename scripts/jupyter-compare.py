#!/usr/bin/env python3
"""Runs the session corpus through a real Jupyter kernel and through warden sessions, and compares them.

Usage: scripts/jupyter-compare.py [--warden PATH] [--rules FILE] [--session NAME]... [--shard K/N]
                                  [--json FILE] [--check-only] [SESSIONS_DIR]

Each session (corpus/sessions/*.json, format in corpus/sessions/README.md) runs twice, both at the same
time:
  * in Jupyter: ipykernel started by jupyter_client's KernelManager from the test venv that
    scripts/jupyter-venv.sh makes (the default runtime's packages at their locked versions), its cwd a
    fresh temporary directory holding the session's inputs, its environment the jail's (TZ=UTC, C.UTF-8,
    the same thread counts);
  * in warden: `warden repl --json --input FILE...` (inputs land in /work, the cell's cwd), one JSON line
    per cell in, one cell record per line out.
Per cell it compares: the `text/plain` of the execute_result (object addresses such as 0x7f3a... and the
temporary directory's path normalised), stdout, the error name (`ename`), and the number of images
(image/png in display_data and execute_result). It prints a report and exits 1 on any difference
(2 when something could not run at all).

It runs under the Jupyter venv's interpreter: started with another one, it runs scripts/jupyter-venv.sh
(which makes the venv when missing, idempotent) and re-executes itself there.
--check-only runs `warden check` on each session's cells, joined as one program, and nothing else.
"""

import argparse
import base64
import hashlib
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CELL_TIMEOUT = 180.0
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,16}")
# Values that differ between any two runs, normalised like addresses: the wall-clock date and time
# statsmodels prints in a model summary's header ("Date: Tue, 26 Nov 2026", "Time: 11:37:38").
CLOCK = re.compile(r"^(Date|Time):( +)(\w{3}, \d\d \w{3} \d{4}|\d\d:\d\d:\d\d)", re.MULTILINE)


def ensure_venv():
    """Re-executes this script under the Jupyter venv's python unless it already runs there."""
    try:
        import jupyter_client  # noqa: F401
        import ipykernel  # noqa: F401

        return
    except ImportError:
        pass
    if os.environ.get("WARDEN_JUPYTER_COMPARE_REEXEC"):
        sys.exit("jupyter-compare: jupyter_client is missing from the venv")
    python = subprocess.run(
        [os.path.join(ROOT, "scripts", "jupyter-venv.sh")], check=True, stdout=subprocess.PIPE, text=True
    ).stdout.strip().splitlines()[-1]
    env = dict(os.environ, WARDEN_JUPYTER_COMPARE_REEXEC="1")
    os.execve(python, [python, os.path.abspath(__file__)] + sys.argv[1:], env)


def load_sessions(directory, names):
    sessions = []
    for entry in sorted(os.listdir(directory)):
        if not entry.endswith(".json"):
            continue
        path = os.path.join(directory, entry)
        with open(path, encoding="utf-8") as f:
            session = json.load(f)
        session.setdefault("name", entry[:-5])
        if names and session["name"] not in names and entry[:-5] not in names:
            continue
        cells = []
        for cell in session["cells"]:
            cells.append("\n".join(cell) if isinstance(cell, list) else cell)
        session["cells"] = cells
        session["inputs"] = [os.path.normpath(os.path.join(directory, p)) for p in session.get("inputs", [])]
        session["file"] = path
        sessions.append(session)
    return sessions


def jail_threads():
    """The thread count the jail gives numeric libraries (jail/src/plan.rs: CPUs clamped to 1..4)."""
    return str(min(max(os.cpu_count() or 1, 1), 4))


def kernel_env(home):
    threads = jail_threads()
    env = {
        "PATH": os.path.dirname(sys.executable) + ":/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "MPLCONFIGDIR": os.path.join(home, ".matplotlib"),
        # debugpy's warning about frozen modules goes to stderr; keep the kernel's log quiet.
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        env[name] = threads
    return env


def place_inputs(inputs, directory):
    for source in inputs:
        target = os.path.join(directory, os.path.basename(source))
        if os.path.isdir(source):
            shutil.copytree(source, target)
        else:
            shutil.copyfile(source, target)


def images_of(bundle):
    return 1 if bundle and "image/png" in bundle else 0


def png_hashes(bundle):
    """The SHA-256 of the bundle's PNG, if any (reported, not compared: pixels may legitimately differ)."""
    if not bundle or not isinstance(bundle.get("image/png"), str):
        return []
    return [hashlib.sha256(base64.b64decode(bundle["image/png"])).hexdigest()]


def run_jupyter(session):
    """The cells through a real ipykernel: per cell {result, stdout, error, images, status}."""
    from jupyter_client.manager import KernelManager

    work = tempfile.mkdtemp(prefix="warden-jupyter-")
    home = tempfile.mkdtemp(prefix="warden-jupyter-home-")
    cells = []
    # IPC (Unix sockets in the home dir), not TCP: no ports, nothing on the network.
    km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(home, "kernel"))
    started = time.monotonic()
    try:
        place_inputs(session["inputs"], work)
        km.start_kernel(cwd=work, env=kernel_env(home))
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=120)
        ready = time.monotonic() - started
        for code in session["cells"]:
            msg_id = kc.execute(code, store_history=True, allow_stdin=False)
            cell = {"status": None, "result": None, "stdout": "", "error": None, "images": 0, "displays": 0, "png": []}
            deadline = time.monotonic() + CELL_TIMEOUT
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"a cell of {session['name']} ran past {CELL_TIMEOUT} s in Jupyter")
                msg = kc.get_iopub_msg(timeout=left)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind == "stream" and content["name"] == "stdout":
                    cell["stdout"] += content["text"]
                elif kind == "execute_result":
                    cell["result"] = content["data"].get("text/plain")
                    cell["images"] += images_of(content["data"])
                    cell["png"] += png_hashes(content["data"])
                elif kind == "display_data":
                    cell["displays"] += 1
                    cell["images"] += images_of(content["data"])
                    cell["png"] += png_hashes(content["data"])
                elif kind == "error":
                    cell["error"] = content["ename"]
                elif kind == "status" and content["execution_state"] == "idle":
                    break
            while True:
                reply = kc.get_shell_msg(timeout=CELL_TIMEOUT)
                if reply["parent_header"].get("msg_id") == msg_id:
                    cell["status"] = reply["content"]["status"]
                    break
            cells.append(cell)
        kc.stop_channels()
    finally:
        try:
            km.shutdown_kernel(now=True)
        except Exception:
            pass
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    return {"cells": cells, "seconds": time.monotonic() - started, "ready_seconds": ready, "workdir": work}


def run_warden(session, warden, rules):
    """The cells through `warden repl --json`: per cell the same fields as run_jupyter."""
    command = [warden, "repl", "--json"]
    if rules:
        command += ["--rules", rules]
    for path in session["inputs"]:
        command += ["--input", path]
    lines = "".join(json.dumps({"code": code}) + "\n" for code in session["cells"])
    started = time.monotonic()
    proc = subprocess.run(
        command,
        input=lines,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=CELL_TIMEOUT * max(1, len(session["cells"])),
    )
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    cells = []
    for record in records:
        result = record.get("result") or None
        images = images_of(result) + sum(images_of(item) for item in record.get("display") or [])
        error = record.get("error")
        cells.append(
            {
                "status": record["status"],
                "result": result.get("text/plain") if result else None,
                "stdout": record.get("stdout", ""),
                "error": error["name"] if error else None,
                "images": images,
                "displays": len(record.get("display") or []),
                "png": png_hashes(result) + [h for item in record.get("display") or [] for h in png_hashes(item)],
                "message": record.get("message"),
                "findings": [
                    f"{f.get('rule')}: {f.get('message')}" for f in (record.get("check") or {}).get("findings", [])
                ],
            }
        )
    return {
        "cells": cells,
        "seconds": time.monotonic() - started,
        "exit": proc.returncode,
        "stderr": proc.stderr[-4000:],
    }


def normalise(text, workdir=None):
    if text is None:
        return None
    if workdir:
        text = text.replace(workdir, "/work")
    text = CLOCK.sub(lambda m: f"{m.group(1)}:{m.group(2)}…", text)
    return ADDRESS.sub("0x…", text)


def first_difference(a, b):
    """A short excerpt around the first line where two texts differ."""
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "<missing line>"
        y = lb[i] if i < len(lb) else "<missing line>"
        if x != y:
            return f"line {i + 1}:\n        jupyter: {x!r}\n        warden:  {y!r}"
    return "texts differ in trailing whitespace or newlines"


def compare(session, jupyter, warden):
    """The differences between the two runs, as (cell number, what, detail) triples."""
    found = []
    jcells, wcells = jupyter["cells"], warden["cells"]
    if len(wcells) != len(jcells):
        found.append(
            (len(wcells) + 1, "records", f"warden answered {len(wcells)} of {len(jcells)} cells "
             f"(exit {warden['exit']}): {warden['stderr'].strip()[-600:]}")
        )
    workdir = jupyter.get("workdir")
    for number, (j, w) in enumerate(zip(jcells, wcells), start=1):
        if w["status"] not in ("ok", "error"):
            detail = w.get("message") or ""
            if w.get("findings"):
                detail += " — " + "; ".join(w["findings"])
            found.append((number, "status", f"warden status {w['status']}: {detail}"))
            continue
        jr, wr = normalise(j["result"], workdir), normalise(w["result"])
        if jr != wr:
            if jr is None or wr is None:
                found.append((number, "result", f"jupyter: {jr!r}\n        warden:  {wr!r}"))
            else:
                found.append((number, "result", first_difference(jr, wr)))
        js, ws = normalise(j["stdout"], workdir), normalise(w["stdout"])
        if js != ws:
            found.append((number, "stdout", first_difference(js, ws)))
        if j["error"] != w["error"]:
            found.append((number, "error", f"jupyter: {j['error']}, warden: {w['error']}"))
        if j["images"] != w["images"]:
            found.append((number, "images", f"jupyter shows {j['images']}, warden {w['images']}"))
    return found


def check_only(sessions, warden, rules):
    failed = 0
    for session in sessions:
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write("\n".join(session["cells"]) + "\n")
            program = f.name
        command = [warden, "check", program] + (["--rules", rules] if rules else [])
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        os.unlink(program)
        if proc.returncode != 0:
            failed += 1
            print(f"NOT ALLOWED {session['name']}:\n{proc.stdout}")
    print(f"check: {len(sessions) - failed}/{len(sessions)} sessions allowed as one program")
    return 1 if failed else 0


def main():
    ensure_venv()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sessions_dir", nargs="?", default=os.path.join(ROOT, "corpus", "sessions"))
    parser.add_argument("--warden", default=os.path.join(ROOT, "target", "debug", "warden"))
    parser.add_argument("--rules", help="rules file for warden (default: warden's default policy)")
    parser.add_argument("--session", action="append", default=[], help="only this session (repeatable)")
    parser.add_argument("--json", help="write every cell of both runs and the differences to this file")
    parser.add_argument("--check-only", action="store_true", help="only `warden check` each session")
    parser.add_argument("--jobs", type=int, default=1, help="sessions compared at a time (default 1)")
    parser.add_argument("--shard", help="K/N: only the sessions whose index (sorted by file name) is K mod N")
    args = parser.parse_args()

    sessions = load_sessions(args.sessions_dir, set(args.session))
    if args.shard:
        k, n = (int(x) for x in args.shard.split("/"))
        sessions = [s for i, s in enumerate(sessions) if i % n == k]
    if not sessions:
        print("jupyter-compare: no sessions", file=sys.stderr)
        return 2
    if args.check_only:
        return check_only(sessions, args.warden, args.rules)

    import ipykernel
    import jupyter_client

    print(
        f"jupyter-compare: {len(sessions)} sessions, {sum(len(s['cells']) for s in sessions)} cells; "
        f"ipykernel {ipykernel.__version__}, jupyter_client {jupyter_client.__version__}, "
        f"python {sys.executable}; warden {args.warden}",
        flush=True,
    )

    def one(session):
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            jf = pool.submit(run_jupyter, session)
            wf = pool.submit(run_warden, session, args.warden, args.rules)
            jupyter, warden = jf.result(), wf.result()
        return session, jupyter, warden, compare(session, jupyter, warden)

    report, total_diffs, sessions_with_diffs, cells_with_diffs = [], 0, 0, 0
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for session, jupyter, warden, diffs in pool.map(one, sessions):
            n = len(session["cells"])
            errors = sum(1 for c in jupyter["cells"] if c["error"])
            images = sum(c["images"] for c in jupyter["cells"])
            results = sum(1 for c in jupyter["cells"] if c["result"] is not None)
            mark = "ok  " if not diffs else "DIFF"
            print(
                f"{mark} {session['name']}: {n} cells ({results} results, {images} images, {errors} errors); "
                f"jupyter {jupyter['seconds']:.1f} s, warden {warden['seconds']:.1f} s",
                flush=True,
            )
            for number, what, detail in diffs:
                print(f"    cell {number} {what}: {detail}")
            if diffs:
                sessions_with_diffs += 1
                cells_with_diffs += len({d[0] for d in diffs})
                total_diffs += len(diffs)
            report.append(
                {
                    "name": session["name"],
                    "cells": session["cells"],
                    "jupyter": jupyter,
                    "warden": warden,
                    "differences": [{"cell": c, "what": w, "detail": d} for c, w, d in diffs],
                }
            )
    cells = sum(len(s["cells"]) for s in sessions)
    same_png = total_png = 0
    for entry in report:
        for j, w in zip(entry["jupyter"]["cells"], entry["warden"]["cells"]):
            total_png += len(j["png"])
            same_png += sum(1 for a, b in zip(sorted(j["png"]), sorted(w["png"])) if a == b)
    print(f"jupyter-compare: images byte-identical to Jupyter's: {same_png}/{total_png} (not compared)")
    print(
        f"jupyter-compare: {len(sessions) - sessions_with_diffs}/{len(sessions)} sessions and "
        f"{cells - cells_with_diffs}/{cells} cells the same; {total_diffs} differences "
        f"({time.monotonic() - started:.0f} s)"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 1 if total_diffs else 0


if __name__ == "__main__":
    sys.exit(main())
