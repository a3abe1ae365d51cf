"""Typed exceptions for the answers of warden's HTTP API that carry no result.

A run or a cell that was judged or executed is never an exception: a denied, failed, timed-out or
invalid-output program comes back as a record (HTTP 200), because the agent needs its findings and
output. What raises is a request the server would not serve, mapped from the API's status and its
`{"error": {"code", "message"}}` body, or a server that could not be reached at all.
"""

from __future__ import annotations

from typing import Any, Optional


class WardenError(Exception):
    """Base class of everything this package raises."""

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        #: The HTTP status, when the server answered.
        self.status = status
        #: The API's error code (`bad_request`, `forbidden`, `queue_full`, ...), when it sent one.
        self.code = code
        #: Seconds the server asked the caller to wait (`Retry-After`), on 429 and 503.
        self.retry_after = retry_after

    def __str__(self) -> str:
        parts = []
        if self.status is not None:
            parts.append(str(self.status))
        if self.code:
            parts.append(self.code)
        prefix = " ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message


class WardenConnectionError(WardenError):
    """The server could not be reached (no socket, connection refused, connection reset)."""


class WardenTimeout(WardenError):
    """No answer arrived within the client's timeout."""


class BadRequest(WardenError):
    """400: a malformed request, an unknown field or policy, a bad input name, a refused schema."""


class Unauthorized(WardenError):
    """401: no token, or a token the server does not know."""


class Forbidden(WardenError):
    """403: the token may not use that policy (or sessions are turned off)."""


class NotFound(WardenError):
    """404: no such endpoint, no such session for this caller, or no such file in it."""


class SessionGone(NotFound):
    """The session this client created cannot be used any more; start a new one.

    410 `session_lost`: its state was lost without anyone ending it — the server on its node
    restarted since it was created, or (answered by the router in front of several nodes) its
    node is down. 404 on a session this client created: it ended (closed, idle, lifetime, a lost
    interpreter) and the server no longer knows it. The message is the server's."""

    def __init__(self, message: str, *, state_lost: bool = False, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        #: True when the server said the session's interpreter and variables were lost (410
        #: `session_lost`); False when the session ended and the server no longer knows it (404).
        #: Either way its variables are gone: a new session starts empty.
        self.state_lost = state_lost


class WrongNode(WardenError):
    """421 `wrong_node`: the session is held by another node (`node`); the request reached a node
    directly instead of through the router that sends it to its node."""

    def __init__(self, message: str, *, node: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        #: The node that holds the session, as the server named it.
        self.node = node


class RequestTimeout(WardenError):
    """408: the request's body did not reach the server in time."""


class TooLarge(WardenError):
    """413: the body is over the server's `max_request_bytes`, or a file over the policy's cap."""


class Overloaded(WardenError):
    """429 or 503: the server could not take the request now; `retry_after` says when to retry.

    Raised only once the client's bounded retries are spent (or retries are turned off)."""


class QueueFull(Overloaded):
    """429 `queue_full`: every run slot is busy and the queue is full."""


class SessionLimit(Overloaded):
    """429 `session_limit`: the server, or this client, holds as many sessions as it may."""


class Unavailable(Overloaded):
    """503: no run slot became free in time (`queue_timeout`) or the server is shutting down."""


class ServerError(WardenError):
    """500 (or any other unexpected status): the server could not run the job; the message says why."""


class ProtocolError(WardenError):
    """The server's answer was not what the API promises (not JSON, missing fields)."""


_BY_CODE = {
    "queue_full": QueueFull,
    "session_limit": SessionLimit,
    "queue_timeout": Unavailable,
    "shutting_down": Unavailable,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "session_lost": SessionGone,
    "wrong_node": WrongNode,
    "too_large": TooLarge,
    "bad_request": BadRequest,
}

_BY_STATUS = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    408: RequestTimeout,
    410: SessionGone,
    413: TooLarge,
    421: WrongNode,
    429: Overloaded,
    503: Unavailable,
}


def error_for(
    status: int,
    code: Optional[str],
    message: str,
    retry_after: Optional[float],
    node: Optional[str] = None,
) -> WardenError:
    """The exception for an HTTP error answer: by the API's code first, else by the status.
    `node` is what a `wrong_node` answer names."""
    cls = _BY_CODE.get(code or "")
    if cls is None or (status == 404 and cls is not NotFound):
        cls = _BY_STATUS.get(status, ServerError)
    if cls is SessionGone:
        return SessionGone(
            message, status=status, code=code, retry_after=retry_after, state_lost=status == 410
        )
    if cls is WrongNode:
        return WrongNode(message, status=status, code=code, retry_after=retry_after, node=node)
    return cls(message, status=status, code=code, retry_after=retry_after)
