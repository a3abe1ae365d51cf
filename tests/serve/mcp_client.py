"""Drives `warden mcp` with the official MCP Python client (PyPI `mcp`), as an agent would.

Usage: python3 tests/serve/mcp_client.py WARDEN_BINARY [EXTRA WARDEN MCP ARGS...]

Run by tests/serve/mcp.rs from the venv scripts/setup-mcp-test.sh makes. Each check that fails
is collected; the script prints one JSON summary line ({"ok": bool, "checks": {...}, "failures":
[...]}) on stdout and exits 1 if any check failed, 2 if the session itself broke.
"""

import asyncio
import base64
import json
import os
import sys
import traceback

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TIMEOUT_S = 180

PLOT_PROGRAM = """\
import json
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

fig, ax = plt.subplots()
ax.plot([1, 2, 3], [4, 1, 9])
fig.savefig("chart.png")
print(json.dumps({"answer": 4242, "points": 3}))
"""

DENIED_PROGRAM = "import subprocess\nsubprocess.run(['id'])\n"
CHAINED_PROGRAM = (
    "def f():\n    try:\n        {}['a']\n    except KeyError as err:\n"
    "        raise ValueError('bad') from err\nf()\n"
)


class Checks:
    def __init__(self):
        self.results = {}
        self.failures = []

    def check(self, name, condition, detail=""):
        self.results[name] = bool(condition)
        if not condition:
            self.failures.append(f"{name}: {detail}"[:4000])


def descendants(pids):
    """Every process below `pids` (by `/proc/<pid>/task/<tid>/children`), as `(pid, start time)`."""
    found, todo = set(), list(pids)
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    children = [int(c) for c in f.read().split()]
            except OSError:
                continue
            for child in children:
                start = started_at(child)
                if start is not None and (child, start) not in found:
                    found.add((child, start))
                    todo.append(child)
    return found


def started_at(pid):
    """Field 22 of `/proc/<pid>/stat` (tells a reused pid apart), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def workers_in(state_dir):
    """Processes whose command line names the session's state dir (its `warden worker`s)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state_dir in cmdline and "worker" in cmdline:
            found.append(f"{entry}: {cmdline}")
    return found


def texts(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


def images(result):
    return [block for block in result.content if block.type == "image"]


async def session(binary, extra_args, checks):
    env = {}
    for name in ("WARDEN_DATA_DIR", "XDG_DATA_HOME"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    params = StdioServerParameters(
        command=binary, args=["mcp", "--audit-log", "off", *extra_args], env=env
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=TIMEOUT_S) as client:
            init = await client.initialize()
            checks.check(
                "server_info",
                init.server_info.name == "warden" and init.instructions and "jail" in init.instructions,
                f"{init.server_info!r} {init.instructions!r}",
            )

            tools = await client.list_tools()
            names = sorted(tool.name for tool in tools.tools)
            checks.check(
                "list_tools",
                names == ["check_python", "describe_policy", "get_file", "review_status", "run_python", "run_reviewed"],
                f"tools: {names}",
            )

            plot = await client.call_tool("run_python", {"code": PLOT_PROGRAM})
            plot_text = texts(plot)
            checks.check("run_ok_not_error", plot.is_error is False, plot_text)
            checks.check("run_ok_stdout", '"answer": 4242' in plot_text, plot_text)
            pngs = [image for image in images(plot) if image.mime_type == "image/png"]
            checks.check("run_ok_png_content", len(pngs) == 1, f"content: {plot.content!r}"[:2000])
            if pngs:
                raw = base64.b64decode(pngs[0].data)
                checks.check("run_ok_png_magic", raw.startswith(b"\x89PNG\r\n\x1a\n"), repr(raw[:16]))

            # The record comes as structured content, never again as a JSON dump in the text.
            structured = plot.structured_content or {}
            checks.check(
                "run_record_is_structured_not_dumped",
                structured.get("status") == "ok"
                and "cell record" not in plot_text
                and '"execution_count"' not in plot_text,
                f"{plot_text!r} {structured!r}"[:2000],
            )

            # A file the cell wrote comes back through get_file: an image as an image.
            chart = await client.call_tool("get_file", {"path": "chart.png"})
            chart_pngs = [image for image in images(chart) if image.mime_type == "image/png"]
            checks.check(
                "get_file_image",
                chart.is_error is False
                and len(chart_pngs) == 1
                and base64.b64decode(chart_pngs[0].data).startswith(b"\x89PNG\r\n\x1a\n"),
                f"{chart.content!r}"[:2000],
            )
            missing = await client.call_tool("get_file", {"path": "nope.txt"})
            checks.check(
                "get_file_missing_names_the_files",
                missing.is_error is True and "nope.txt" in texts(missing) and "chart.png" in texts(missing),
                texts(missing),
            )

            # Output is bounded: head and tail kept, a line says what was cut and how to see it.
            flood = await client.call_tool(
                "run_python", {"code": "for i in range(200000):\n    print('row', i)\n"}
            )
            flood_text = texts(flood)
            checks.check(
                "run_output_bounded",
                len(flood_text) <= 20_500
                and "row 0\n" in flood_text
                and "warden cut" in flood_text
                and "print less" in flood_text
                and "kept its state" in flood_text,
                f"{len(flood_text)} chars: {flood_text[:300]!r} ... {flood_text[-300:]!r}",
            )

            # display() outputs reach the model as text (a DataFrame's text/plain).
            shown = await client.call_tool(
                "run_python",
                {"code": "import pandas as pd\ndisplay(pd.DataFrame({'region': ['north'], 'n': [31337]}))\n"},
            )
            shown_text = texts(shown)
            checks.check(
                "run_display_text",
                shown.is_error is False and "31337" in shown_text and "north" in shown_text,
                shown_text,
            )

            # The API's result/schema options: the last line is the result; an invalid one names
            # the instance path and the requirement, and advises run_python's own option.
            schema = {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}
            invalid = await client.call_tool(
                "run_python",
                {"code": "import json\nprint('debug')\nprint(json.dumps({'n': 3}))\n", "schema": schema,
                 "result": "last_line"},
            )
            invalid_text = texts(invalid)
            checks.check(
                "run_schema_errors_are_actionable",
                invalid.is_error is True
                and "/n" in invalid_text
                and "instance path" in invalid_text
                and "/properties/n/type" in invalid_text
                and "warden run" not in invalid_text,
                invalid_text,
            )
            valid = await client.call_tool(
                "run_python",
                {"code": "import json\nprint('debug')\nprint(json.dumps({'n': 'x'}))\n", "schema": schema,
                 "result": "last_line"},
            )
            checks.check("run_schema_last_line_ok", valid.is_error is False, texts(valid))
            in_file = await client.call_tool(
                "run_python",
                {"code": "import json\nopen('result.json', 'w').write(json.dumps({'n': 'y'}))\n",
                 "schema": schema, "result": "file"},
            )
            checks.check("run_schema_file_ok", in_file.is_error is False, texts(in_file))
            no_file = await client.call_tool(
                "run_python", {"code": "x = 1\n", "schema": schema, "result": "file", "reset": True}
            )
            checks.check(
                "run_schema_file_missing",
                no_file.is_error is True and "result.json was not written" in texts(no_file),
                texts(no_file),
            )

            denied = await client.call_tool("run_python", {"code": DENIED_PROGRAM})
            denied_text = texts(denied)
            checks.check("run_denied_is_error", denied.is_error is True, denied_text)
            checks.check("run_denied_names_rule", "IMP101" in denied_text, denied_text)
            checks.check("run_denied_did_not_run", "did not run" in denied_text, denied_text)

            crash = await client.call_tool("run_python", {"code": "x = 1\nprint('before')\n1/0\n"})
            crash_text = texts(crash)
            checks.check("run_error_is_error", crash.is_error is True, crash_text)
            checks.check("run_error_names_exception", "ZeroDivisionError" in crash_text, crash_text)

            # A chained exception (`raise ... from ...`) reaches the model once, not once per place
            # that could show it; a denied run says why.
            chained = await client.call_tool("run_python", {"code": CHAINED_PROGRAM})
            chained_text = texts(chained)
            checks.check(
                "run_chained_once",
                chained_text.count("raise ValueError('bad') from err") == 1
                and "ValueError: bad" in chained_text,
                chained_text,
            )
            checks.check("run_denied_has_message", "denied by the policy" in denied_text, denied_text)

            slow = await client.call_tool(
                "run_python", {"code": "while True:\n    pass\n", "timeout_ms": 700}
            )
            slow_text = texts(slow)
            checks.check("run_timeout_is_error", slow.is_error is True, slow_text)
            checks.check("run_timeout_names_limit", "700 ms" in slow_text, slow_text)

            # A call the client gives up on is cancelled; the server must stop the run (kill its
            # worker and jail), not leave it spinning until the policy's wall-clock limit.
            state_dir = os.environ.get("WARDEN_TEST_STATE_DIR", "")
            endless = asyncio.ensure_future(
                client.call_tool("run_python", {"code": "while True:\n    pass\n"}, read_timeout_seconds=4)
            )
            # The session's jail (its init and interpreter, below the session's worker), seen
            # while the endless cell runs.
            jail, workers = set(), []
            while not endless.done():
                workers = [int(w.split(":")[0]) for w in workers_in(state_dir)] if state_dir else []
                jail |= descendants(workers)
                await asyncio.sleep(0.05)
            try:
                await endless
                checks.check("cancel_times_out", False, "an endless loop returned within 4 s")
            except Exception:  # noqa: BLE001 - the client's timeout error
                checks.check("cancel_times_out", True)
            # The run stops at once: every process of the jail is gone within 5 s (on a loaded host
            # the cancel may come before the session's jail has started: then there is none). The worker then
            # tears the jail down (its cgroup waits for the killed processes to leave) and ends:
            # within 15 s on a loaded host.
            running = [p for p, start in jail if started_at(p) == start]
            for _ in range(50):
                if not running:
                    break
                await asyncio.sleep(0.1)
                running = [p for p, start in jail if started_at(p) == start]
            checks.check("cancel_stops_the_run", not running, f"jail processes still running 5 s after cancelling: {running}")
            left = workers_in(state_dir) if state_dir else ["WARDEN_TEST_STATE_DIR is not set"]
            for _ in range(150):
                if not left:
                    break
                await asyncio.sleep(0.1)
                left = workers_in(state_dir)
            checks.check("cancel_ends_the_worker", not left, f"still running 15 s after cancelling: {left}")

            check_denied = await client.call_tool("check_python", {"code": DENIED_PROGRAM})
            checks.check("check_denied_is_error", check_denied.is_error is True, texts(check_denied))
            checks.check("check_denied_names_rule", "IMP101" in texts(check_denied), texts(check_denied))

            check_ok = await client.call_tool("check_python", {"code": "import json\nprint(json.dumps(1))\n"})
            checks.check(
                "check_allowed",
                check_ok.is_error is False and "allowed" in texts(check_ok),
                texts(check_ok),
            )

            described = await client.call_tool("describe_policy", {})
            checks.check(
                "describe_policy",
                described.is_error is False and "pandas" in texts(described),
                texts(described)[:2000],
            )

            unknown = await client.call_tool("run_python", {"code": "print(1)", "policy": "no-such-policy"})
            checks.check(
                "unknown_policy_is_tool_error",
                unknown.is_error is True and "no-such-policy" in texts(unknown),
                texts(unknown),
            )


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    checks = Checks()
    try:
        asyncio.run(session(sys.argv[1], sys.argv[2:], checks))
    except BaseException:  # noqa: BLE001 - the summary must say what broke
        checks.failures.append("session: " + traceback.format_exc())
        print(json.dumps({"ok": False, "checks": checks.results, "failures": checks.failures}))
        return 2
    ok = not checks.failures
    print(json.dumps({"ok": ok, "checks": checks.results, "failures": checks.failures}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
