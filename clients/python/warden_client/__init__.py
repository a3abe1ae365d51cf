"""warden's Python client: its HTTP API (runs, checks, sessions, files) and adapters for agent
frameworks (`warden_client.adapters.smolagents`, `.autogen`, `.langchain`)."""

from .client import Client, Session, default_socket
from .errors import (
    BadRequest,
    Forbidden,
    NotFound,
    Overloaded,
    ProtocolError,
    QueueFull,
    RequestTimeout,
    ServerError,
    SessionGone,
    SessionLimit,
    TooLarge,
    Unauthorized,
    Unavailable,
    WardenConnectionError,
    WardenError,
    WardenTimeout,
)
from .render import DEFAULT_TEXT_BUDGET, Image, ModelOutput, render
from .results import CellResult, Finding, RunResult

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_TEXT_BUDGET",
    "BadRequest",
    "CellResult",
    "Client",
    "Finding",
    "Forbidden",
    "Image",
    "ModelOutput",
    "NotFound",
    "Overloaded",
    "ProtocolError",
    "QueueFull",
    "RequestTimeout",
    "RunResult",
    "ServerError",
    "Session",
    "SessionGone",
    "SessionLimit",
    "TooLarge",
    "Unauthorized",
    "Unavailable",
    "WardenConnectionError",
    "WardenError",
    "WardenTimeout",
    "default_socket",
    "render",
]
