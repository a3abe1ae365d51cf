"""Where the `warden serve` under test is: tests/serve/adapters.rs starts a real server (real jails)
and passes its addresses in the environment. The tests fail, never skip, without one."""

from __future__ import annotations

import os

from warden_client import Client


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(
            f"{name} is not set: these tests run against a real `warden serve`; run them with "
            "`cargo nextest run -p warden --test e2e serve::adapters` (tests/serve/adapters.rs starts the server)"
        )
    return value


def socket_path() -> str:
    return _env("WARDEN_TEST_SOCKET")


def tcp_url() -> str:
    return "http://" + _env("WARDEN_TEST_TCP")


def token() -> str:
    return _env("WARDEN_TEST_TOKEN")


def strict_token() -> str:
    return _env("WARDEN_TEST_STRICT_TOKEN")


def approver_token() -> str:
    """A token that may approve reviews (`approve = true`)."""
    return _env("WARDEN_TEST_APPROVER_TOKEN")


def unix_client(**kwargs) -> Client:
    return Client("unix:" + socket_path(), **kwargs)


def tcp_client(**kwargs) -> Client:
    return Client(tcp_url(), token=token(), **kwargs)


def flatten(content) -> str:
    """A message's content as text, whatever shape the framework gives it (str, list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(flatten(part.get("text", "") if isinstance(part, dict) else part) for part in content)
    return str(content)
