"""Drives `warden serve`'s MCP endpoint over Streamable HTTP with the official MCP Python client.

Usage: python3 tests/serve/mcp_http_client.py TCP_URL SOCKET_PATH
  env WARDEN_TEST_TOKEN (may use the default policy), WARDEN_TEST_STRICT_TOKEN (strict policy only)

Run by tests/serve/mcp.rs from the venv scripts/setup-mcp-test.sh makes. Prints one JSON summary line
({"ok": bool, "checks": {...}, "failures": [...]}) and exits 1 if a check failed, 2 if the script
itself broke.
"""

import asyncio
import json
import logging
import os
import sys
import traceback

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

TIMEOUT_S = 120

DENIED_PROGRAM = "import subprocess\nsubprocess.run(['id'])\n"

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Checks:
    def __init__(self):
        self.results = {}
        self.failures = []

    def check(self, name, condition, detail=""):
        self.results[name] = bool(condition)
        if not condition:
            self.failures.append(f"{name}: {detail}"[:4000])


def texts(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


def http_client(token=None, uds=None, session_ids=None):
    """An httpx client with the token, over the socket when `uds`, noting the MCP session id."""

    async def note(response):
        if session_ids is not None and "mcp-session-id" in response.headers:
            session_ids.append(response.headers["mcp-session-id"])

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = httpx2.AsyncHTTPTransport(uds=uds) if uds else None
    return httpx2.AsyncClient(
        headers=headers,
        transport=transport,
        timeout=httpx2.Timeout(TIMEOUT_S),
        event_hooks={"response": [note]},
    )


class Warnings(logging.Handler):
    """The client library's own warnings (it logs a DELETE it takes for failed)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


async def over_tcp(url, checks):
    token = os.environ["WARDEN_TEST_TOKEN"]
    strict = os.environ["WARDEN_TEST_STRICT_TOKEN"]

    # No token over TCP: refused before anything else, as on the rest of the API.
    async with httpx2.AsyncClient(timeout=30) as raw:
        refused = await raw.post(url, json=INITIALIZE, headers=MCP_HEADERS)
        checks.check(
            "unauthenticated_is_401",
            refused.status_code == 401 and refused.headers.get("www-authenticate") == "Bearer",
            f"{refused.status_code} {refused.headers} {refused.text}",
        )
        wrong = await raw.post(url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": "Bearer nope"})
        checks.check("wrong_token_is_401", wrong.status_code == 401, f"{wrong.status_code} {wrong.text}")
    try:
        async with http_client() as client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=30) as session:
                    await asyncio.wait_for(session.initialize(), 30)
        checks.check("unauthenticated_client_fails", False, "initialised without a token")
    except Exception:  # noqa: BLE001 - the client reports the 401 as an error response
        checks.check("unauthenticated_client_fails", True)

    session_ids = []
    async with http_client(token, session_ids=session_ids) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT_S) as session:
                init = await session.initialize()
                checks.check(
                    "server_info",
                    init.server_info.name == "warden" and "jail" in (init.instructions or ""),
                    repr(init.server_info),
                )
                names = sorted(tool.name for tool in (await session.list_tools()).tools)
                checks.check(
                    "list_tools",
                    {"check_python", "describe_policy", "run_python"} <= set(names),
                    f"{names}",
                )
                checks.check("session_id_issued", bool(session_ids), f"{session_ids}")

                first = await session.call_tool("run_python", {"code": "x = 41\nprint('set', x)\n"})
                checks.check(
                    "run_ok", first.is_error is False and "set 41" in texts(first), texts(first)
                )
                second = await session.call_tool("run_python", {"code": "print(x + 1)\n"})
                checks.check(
                    "state_persists", second.is_error is False and "42" in texts(second), texts(second)
                )

                denied = await session.call_tool("run_python", {"code": DENIED_PROGRAM})
                denied_text = texts(denied)
                checks.check("run_denied_is_error", denied.is_error is True, denied_text)
                checks.check("run_denied_names_rule", "IMP101" in denied_text, denied_text)

                checked = await session.call_tool("check_python", {"code": "import json\n"})
                checks.check(
                    "check_allowed", checked.is_error is False and "allowed" in texts(checked), texts(checked)
                )

                # Another client (another token) cannot use this MCP session, even knowing its id.
                if session_ids:
                    async with httpx2.AsyncClient(timeout=30) as raw:
                        hijack = await raw.post(
                            url,
                            json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
                            headers={
                                **MCP_HEADERS,
                                "Authorization": f"Bearer {strict}",
                                "Mcp-Session-Id": session_ids[0],
                                "Mcp-Protocol-Version": init.protocol_version,
                            },
                        )
                    checks.check("other_client_gets_404", hijack.status_code == 404, f"{hijack.status_code} {hijack.text}")

    # Leaving the client ended the MCP session with DELETE /mcp, which the client took as done.
    checks.check(
        "session_terminated_cleanly",
        not any("termination" in message for message in WARNINGS.messages),
        f"{WARNINGS.messages}",
    )

    # A token limited to the strict policy cannot use the default one through MCP either.
    async with http_client(strict) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT_S) as session:
                await session.initialize()
                forbidden = await session.call_tool("run_python", {"code": "print(1)", "policy": "default"})
                checks.check(
                    "token_policies_apply",
                    forbidden.is_error is True and "forbidden" in texts(forbidden),
                    texts(forbidden),
                )


async def over_socket(socket_path, checks):
    # On the socket the peer's uid is the identity; no token needed.
    async with http_client(uds=socket_path) as client:
        async with streamable_http_client("http://localhost/mcp", http_client=client) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT_S) as session:
                await session.initialize()
                ran = await session.call_tool("run_python", {"code": "print(sum(range(10)))\n"})
                checks.check("socket_run_ok", ran.is_error is False and "45" in texts(ran), texts(ran))


WARNINGS = Warnings()


def main():
    logging.getLogger().addHandler(WARNINGS)
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    checks = Checks()
    try:
        asyncio.run(over_tcp(sys.argv[1], checks))
        asyncio.run(over_socket(sys.argv[2], checks))
    except BaseException:  # noqa: BLE001 - the summary must say what broke
        checks.failures.append("client: " + traceback.format_exc())
        print(json.dumps({"ok": False, "checks": checks.results, "failures": checks.failures}))
        return 2
    ok = not checks.failures
    print(json.dumps({"ok": ok, "checks": checks.results, "failures": checks.failures}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
