"""A small client for warden's HTTP API (docs/serve.md), on the standard library alone.

    from warden_client import Client
    client = Client()                                   # the local socket, or $WARDEN_URL
    client = Client("http://127.0.0.1:8750", token=...) # TCP with a bearer token
    print(client.run("print(6 * 7)").stdout)
    with client.session() as session:
        session.execute("x = 6")
        print(session.execute("x * 7").result_text)

Every request goes on a fresh connection. Answers of 429 and 503 are retried after the server's
`Retry-After`, a bounded number of times and for a bounded total wait. A connection that cannot be
made is retried the same way after a short pause; so is a connection that breaks after the request
was sent, and a 502 or 504 from a router in front of several nodes, except for a session's cell
(`POST /v1/sessions/{id}/execute`), which may have run and is never sent twice. Behind a router,
a retried request goes to another live node (docs/scale-out.md). Other errors raise the typed
exceptions of `warden_client.errors` at once.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union, cast

from . import errors
from .results import CellResult, RunResult

Inputs = Union[Mapping[str, Union[bytes, str]], Iterable[Tuple[str, Union[bytes, str]]], None]

DEFAULT_TIMEOUT = 120.0

#: Pauses before the retries of a connection error (seconds), the last one repeated.
CONNECTION_RETRY_DELAYS = (0.2, 0.5, 1.0)


def _replayable(method: str, path: str) -> bool:
    """Whether a request may be sent again when its answer was lost: everything but a session's
    cell. A run is a fresh jail whose only effects are its record and files, which a lost answer
    never delivered; checks, reads, uploads (a file replaced by the same bytes) and ends are
    idempotent; a session started twice leaves one unused session that its idle timeout ends. A
    cell may have changed the session's state (`x += 1`), so it is never replayed."""
    return not (method == "POST" and path.startswith("/v1/sessions/") and path.endswith("/execute"))


def default_socket() -> str:
    """Where `warden serve` listens by default: /run/warden/warden.sock as root, else
    $XDG_RUNTIME_DIR/warden.sock."""
    if os.geteuid() == 0:
        return "/run/warden/warden.sock"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "warden.sock")
    return "/run/warden/warden.sock"


class _UnixConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix stream socket."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("warden", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def _encode_inputs(inputs: Inputs) -> Optional[List[Dict[str, str]]]:
    if inputs is None:
        return None
    items = inputs.items() if isinstance(inputs, Mapping) else inputs
    out = []
    for name, content in items:
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        out.append({"name": name, "content_base64": base64.b64encode(data).decode("ascii")})
    return out


def _retry_after(headers: http.client.HTTPMessage) -> Optional[float]:
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        return None  # an HTTP date: warden sends seconds, so treat it as absent


class Client:
    """A connection to one `warden serve`.

    Args:
        url: `unix:/path/to/warden.sock` (or a bare socket path), or `http://host:port` (`https://`
            when TLS is in front). Default: `$WARDEN_URL`, else the server's default socket.
        token: the bearer token (required over TCP; optional on the socket). Default: `$WARDEN_TOKEN`.
        timeout: seconds to wait for one answer (a run's answer comes when the run is over).
        max_retries: how many times a 429 or 503 answer is retried after its `Retry-After`, and a
            connection error (or a router's 502 or 504) after a short pause.
        max_retry_wait: the most seconds spent waiting on `Retry-After` for one request; an answer
            asking for longer raises at once.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        *,
        token: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
    ) -> None:
        url = url or os.environ.get("WARDEN_URL") or default_socket()
        self.token = token if token is not None else os.environ.get("WARDEN_TOKEN") or None
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        #: How many times this client has retried a request (429, 503, a connection error, a
        #: router's 502 or 504; all requests together).
        self.retried = 0
        if url.startswith("unix:"):
            path = url[len("unix:"):]
            if path.startswith("//"):
                path = path[2:]
            self._unix: Optional[str] = path
            self._netloc: Optional[Tuple[str, str]] = None
        elif url.startswith(("http://", "https://")):
            parsed = urllib.parse.urlsplit(url)
            if not parsed.hostname:
                raise ValueError(f"no host in {url!r}")
            self._unix = None
            self._netloc = (parsed.scheme, parsed.netloc)
        elif url.startswith("/") or url.startswith("."):
            self._unix = url
            self._netloc = None
        else:
            raise ValueError(f"not a warden address: {url!r} (unix:/path or http://host:port)")
        self.url = url

    def __repr__(self) -> str:
        return f"Client({self.url!r})"

    # --- transport -------------------------------------------------------------------------------

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._unix is not None:
            return _UnixConnection(self._unix, timeout)
        assert self._netloc is not None
        scheme, netloc = self._netloc
        if scheme == "https":
            return http.client.HTTPSConnection(netloc, timeout=timeout)
        return http.client.HTTPConnection(netloc, timeout=timeout)

    def _headers(self, content_type: Optional[str], extra: Optional[Dict[str, str]]) -> Dict[str, str]:
        headers = {"Host": "warden", "Connection": "close", "Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        headers.update(extra or {})
        return headers

    def _open(
        self,
        method: str,
        path: str,
        body: Optional[bytes],
        content_type: Optional[str],
        extra_headers: Optional[Dict[str, str]],
        timeout: Optional[float],
    ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Sends one request and returns the open response, retrying as configured (see the
        module's documentation)."""
        waited = 0.0
        attempt = 0
        limit = self.timeout if timeout is None else timeout
        replayable = _replayable(method, path)
        while True:
            conn = self._connection(limit)
            sent = False
            try:
                conn.connect()
                sent = True
                conn.request(method, path, body=body, headers=self._headers(content_type, extra_headers))
                response = conn.getresponse()
            except socket.timeout as exc:
                conn.close()
                raise errors.WardenTimeout(
                    f"no answer from {self.url} within {limit:g} s ({method} {path})"
                ) from exc
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                error: errors.WardenError = errors.WardenConnectionError(
                    f"cannot reach warden at {self.url}: {exc}"
                    if not sent
                    else f"the connection to warden at {self.url} broke off ({method} {path}): {exc}"
                )
                if (not sent or replayable) and self._may_retry(attempt, waited, None):
                    delay = self._connection_delay(attempt)
                    time.sleep(delay)
                    waited += delay
                    attempt += 1
                    self.retried += 1
                    continue
                raise error from exc
            if response.status < 400:
                return conn, response
            try:
                data = response.read()
            except (OSError, http.client.HTTPException):
                data = b""
            finally:
                conn.close()
            error = self._error(response.status, response.headers, data)
            if isinstance(error, errors.Overloaded) and self._may_retry(attempt, waited, error.retry_after or 1.0):
                delay = error.retry_after if error.retry_after is not None else 1.0
            elif response.status in (502, 504) and replayable and self._may_retry(attempt, waited, None):
                # A router whose node failed under the request: another node takes the retry.
                delay = self._connection_delay(attempt)
            else:
                raise error
            time.sleep(delay)
            waited += delay
            attempt += 1
            self.retried += 1

    def _may_retry(self, attempt: int, waited: float, delay: Optional[float]) -> bool:
        delay = self._connection_delay(attempt) if delay is None else delay
        return attempt < self.max_retries and waited + delay <= self.max_retry_wait

    @staticmethod
    def _connection_delay(attempt: int) -> float:
        return CONNECTION_RETRY_DELAYS[min(attempt, len(CONNECTION_RETRY_DELAYS) - 1)]

    @staticmethod
    def _error(status: int, headers: http.client.HTTPMessage, data: bytes) -> errors.WardenError:
        code = None
        node = None
        message = data.decode("utf-8", "replace").strip() or http.client.responses.get(status, "error")
        try:
            body = json.loads(data)
            code = body["error"]["code"]
            message = body["error"]["message"]
            node = body["error"].get("node")
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
        return errors.error_for(status, code, message, _retry_after(headers), node)

    def _call(
        self,
        method: str,
        path: str,
        payload: Any = None,
        *,
        raw_body: Optional[bytes] = None,
        timeout: Optional[float] = None,
    ) -> bytes:
        if raw_body is not None:
            body, content_type = raw_body, "application/octet-stream"
        elif payload is not None:
            body, content_type = json.dumps(payload).encode("utf-8"), "application/json"
        else:
            body, content_type = None, None
        conn, response = self._open(method, path, body, content_type, None, timeout)
        try:
            return response.read()
        except socket.timeout as exc:
            raise errors.WardenTimeout(f"the answer to {method} {path} stopped arriving") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise errors.WardenConnectionError(f"the answer to {method} {path} broke off: {exc}") from exc
        finally:
            conn.close()

    def _json(self, method: str, path: str, payload: Any = None, **kwargs: Any) -> Any:
        data = self._call(method, path, payload, **kwargs)
        try:
            return json.loads(data)
        except ValueError as exc:
            raise errors.ProtocolError(f"{method} {path}: the answer is not JSON: {data[:200]!r}") from exc

    # --- the API ---------------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        """`GET /healthz`: `{"status": "ok", "running", "max_concurrent_runs", "sessions", ...}`."""
        return cast(Dict[str, Any], self._json("GET", "/healthz"))

    def policies(self) -> Dict[str, Any]:
        """`GET /v1/policies`: the policies this caller may use, and which one it gets by default."""
        return cast(Dict[str, Any], self._json("GET", "/v1/policies"))

    def policy(self, name: Optional[str] = None) -> Dict[str, Any]:
        """One policy's description (allowed modules, limits, layers): `name`, or this caller's default."""
        listing = self.policies()
        wanted = name or listing.get("default")
        for policy in listing.get("policies", []):
            if policy.get("name") == wanted:
                return cast(Dict[str, Any], policy)
        raise errors.NotFound(f"no policy {wanted!r} for this client", code="not_found")

    def check(self, code: str, *, policy: Optional[str] = None) -> Dict[str, Any]:
        """`POST /v1/check`: the policy's verdict without running: `{"decision", "findings", ...}`."""
        body: Dict[str, Any] = {"code": code}
        if policy:
            body["policy"] = policy
        return cast(Dict[str, Any], self._json("POST", "/v1/check", body))

    def run(
        self,
        code: str,
        *,
        policy: Optional[str] = None,
        inputs: Inputs = None,
        schema: Optional[Dict[str, Any]] = None,
        limits: Optional[Dict[str, int]] = None,
        return_files: bool = True,
        timeout: Optional[float] = None,
    ) -> RunResult:
        """`POST /v1/run`: check the code, run it in a fresh jail, return its record.

        A denied, failed or timed-out program is a record (`status` says which), not an exception."""
        body: Dict[str, Any] = {"code": code}
        if policy:
            body["policy"] = policy
        encoded = _encode_inputs(inputs)
        if encoded:
            body["inputs"] = encoded
        if schema is not None:
            body["schema"] = schema
        if limits:
            body["limits"] = limits
        if not return_files:
            body["return_files"] = False
        return RunResult(self._json("POST", "/v1/run", body, timeout=timeout))

    def session(
        self,
        *,
        policy: Optional[str] = None,
        limits: Optional[Dict[str, int]] = None,
        inputs: Inputs = None,
    ) -> Session:
        """`POST /v1/sessions`: start a jailed interpreter that keeps its state across cells."""
        body: Dict[str, Any] = {}
        if policy:
            body["policy"] = policy
        if limits:
            body["limits"] = limits
        encoded = _encode_inputs(inputs)
        if encoded:
            body["inputs"] = encoded
        info = self._json("POST", "/v1/sessions", body)
        if "id" not in info:
            raise errors.ProtocolError(f"the new session has no id: {info!r}")
        return Session(self, info)

    def sessions(self) -> List[Dict[str, Any]]:
        """`GET /v1/sessions`: this caller's live sessions."""
        return cast(List[Dict[str, Any]], self._json("GET", "/v1/sessions").get("sessions", []))

    def session_info(self, session_id: str) -> Dict[str, Any]:
        """`GET /v1/sessions/{id}`: one of this caller's sessions (404 `NotFound` when it has none such)."""
        return cast(Dict[str, Any], self._json("GET", f"/v1/sessions/{urllib.parse.quote(session_id, safe='')}"))

    # --- reviews (docs/serve.md#review) ------------------------------------------------------------

    def reviews(self) -> List[Dict[str, Any]]:
        """`GET /v1/reviews`: every review for an approver, this caller's own otherwise."""
        return cast(List[Dict[str, Any]], self._json("GET", "/v1/reviews").get("reviews", []))

    def review(self, review_id: str) -> Dict[str, Any]:
        """`GET /v1/reviews/{id}`: one review with its `status`, `code`, `findings`, `decided_by`."""
        return cast(Dict[str, Any], self._json("GET", self._review_path(review_id)))

    def approve_review(self, review_id: str, reason: Optional[str] = None) -> Dict[str, Any]:
        """`POST /v1/reviews/{id}/approve` (approvers only: `Forbidden` otherwise)."""
        body = {"reason": reason} if reason else {}
        return cast(Dict[str, Any], self._json("POST", self._review_path(review_id, "/approve"), body))

    def reject_review(self, review_id: str, reason: Optional[str] = None) -> Dict[str, Any]:
        """`POST /v1/reviews/{id}/reject` (approvers only: `Forbidden` otherwise)."""
        body = {"reason": reason} if reason else {}
        return cast(Dict[str, Any], self._json("POST", self._review_path(review_id, "/reject"), body))

    def run_review(self, review_id: str, *, code: Optional[str] = None, timeout: Optional[float] = None) -> RunResult:
        """`POST /v1/reviews/{id}/run`: runs the approved program once (the submitter only); `code`,
        when given, must be the program that was reviewed. A review not approved yet raises
        `WardenError` with status 409 and its code (`review_pending`, `review_rejected`, ...)."""
        body = {"code": code} if code is not None else {}
        return RunResult(self._json("POST", self._review_path(review_id, "/run"), body, timeout=timeout))

    @staticmethod
    def _review_path(review_id: str, suffix: str = "") -> str:
        return f"/v1/reviews/{urllib.parse.quote(review_id, safe='')}{suffix}"


class Session:
    """A live session on the server. Use it as a context manager, or call `close()`."""

    def __init__(self, client: Client, info: Dict[str, Any]) -> None:
        self.client = client
        self.info = info
        self.id: str = info["id"]
        self.closed = False

    def __repr__(self) -> str:
        return f"Session({self.id!r}, policy={self.policy!r})"

    @property
    def policy(self) -> Optional[str]:
        return (self.info.get("policy") or {}).get("name")

    def _path(self, suffix: str = "") -> str:
        return f"/v1/sessions/{self.id}{suffix}"

    def _mine(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except errors.NotFound as exc:
            if isinstance(exc, errors.SessionGone):
                # 410 session_lost, with the server's (or the router's) message.
                self.closed = True
                raise
            # The server says `no session "<id>" for this client (...)`; a missing file says otherwise.
            if exc.message.startswith("no session") or self.closed:
                self.closed = True
                raise errors.SessionGone(
                    f"session {self.id} is gone ({exc.message})", status=exc.status, code=exc.code
                ) from exc
            raise

    def execute(
        self,
        code: str,
        *,
        on_output: Optional[Callable[[str, str], None]] = None,
        timeout: Optional[float] = None,
    ) -> CellResult:
        """Run one cell. With `on_output(name, text)`, output is passed on as the cell writes it
        (`name` is `stdout` or `stderr`; Server-Sent Events underneath)."""
        if on_output is None:
            cell = CellResult(
                self._mine(lambda: self.client._json("POST", self._path("/execute"), {"code": code}, timeout=timeout))
            )
        else:
            cell = self._mine(lambda: self._execute_streaming(code, on_output, timeout))
        cell.limits = self.info.get("limits")
        return cell

    def _execute_streaming(
        self, code: str, on_output: Callable[[str, str], None], timeout: Optional[float]
    ) -> CellResult:
        body = json.dumps({"code": code}).encode("utf-8")
        conn, response = self.client._open(
            "POST",
            self._path("/execute"),
            body,
            "application/json",
            {"Accept": "text/event-stream"},
            timeout,
        )
        try:
            event: Optional[str] = None
            data: List[str] = []
            while True:
                raw = response.readline()
                if not raw:
                    raise errors.ProtocolError("the event stream ended without a record")
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith("event:"):
                    event = line[len("event:"):].strip()
                elif line.startswith("data:"):
                    data.append(line[len("data:"):].lstrip(" "))
                elif line == "" and event is not None:
                    payload = json.loads("\n".join(data))
                    if event == "stream":
                        on_output(payload.get("name", "stdout"), payload.get("text", ""))
                    elif event == "record":
                        return CellResult(payload)
                    elif event == "error":
                        err = payload.get("error") or {}
                        raise errors.error_for(500, err.get("code"), err.get("message", "error"), None)
                    event, data = None, []
        except socket.timeout as exc:
            raise errors.WardenTimeout(f"the cell's events stopped arriving (session {self.id})") from exc
        finally:
            conn.close()

    def upload(self, path: str, content: Union[bytes, str]) -> Dict[str, Any]:
        """Write (or replace) a file in the session's work dir; its directories are made."""
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        quoted = urllib.parse.quote(path, safe="/")
        answer = self._mine(lambda: self.client._json("PUT", self._path(f"/files/{quoted}"), raw_body=data))
        return cast(Dict[str, Any], answer)

    def files(self) -> List[Dict[str, Any]]:
        """The regular files in the work dir: `[{"path", "size"}]`."""
        listing = self._mine(lambda: self.client._json("GET", self._path("/files")))
        return cast(List[Dict[str, Any]], listing.get("files", []))

    def download(self, path: str) -> bytes:
        """One file of the work dir, as bytes."""
        quoted = urllib.parse.quote(path, safe="/")
        return cast(bytes, self._mine(lambda: self.client._call("GET", self._path(f"/files/{quoted}"))))

    def describe(self) -> Dict[str, Any]:
        """`GET /v1/sessions/{id}`: age, idle time, execution count, limits, layers."""
        return cast(Dict[str, Any], self._mine(lambda: self.client._json("GET", self._path())))

    def close(self) -> Optional[Dict[str, Any]]:
        """End the session (interrupting a running cell). Closing twice, or a session that already
        ended on the server, is not an error: the answer is then None."""
        if self.closed:
            return None
        self.closed = True
        try:
            return cast(Optional[Dict[str, Any]], self.client._json("DELETE", self._path()))
        except errors.NotFound:
            return None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
