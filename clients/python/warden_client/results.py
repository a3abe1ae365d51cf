"""The records warden answers with, as small read-only views over their JSON, and the text a model
reads about them.

A run record (`POST /v1/run`) and a cell record (`POST /v1/sessions/{id}/execute`) share most fields:
`status`, `stdout`, `stderr`, `check` (the decision and its findings), `error` (a Python exception as
`{name, value, traceback}`), `message`. Every field of the server's JSON stays reachable through
`.raw`; the properties below are the ones adapters and agents use.
"""

from __future__ import annotations

import base64
from typing import Any, Dict, List, Optional

from .render import ModelOutput, images_of, render


class Finding:
    """One finding of the static check: a rule, where it is, why, and how to repair the code."""

    def __init__(self, raw: Dict[str, Any]) -> None:
        self.raw = raw
        self.rule: str = raw.get("rule", "")
        self.name: str = raw.get("name", "")
        self.action: str = raw.get("action", "")
        self.severity: str = raw.get("severity", "")
        self.message: str = raw.get("message", "")
        self.hint: Optional[str] = raw.get("hint")
        span = raw.get("span") or {}
        self.line: Optional[int] = span.get("line")
        self.column: Optional[int] = span.get("column")

    def describe(self) -> str:
        """`IMP101 (line 1, column 8): module `subprocess` is denied by the policy` and its hint."""
        where = ""
        if self.line is not None:
            where = f" (line {self.line}" + (f", column {self.column}" if self.column else "") + ")"
        text = f"{self.rule}{where}: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def __repr__(self) -> str:
        return f"Finding({self.rule!r}, line={self.line}, message={self.message!r})"


class _Record:
    """What run and cell records have in common."""

    def __init__(self, raw: Dict[str, Any]) -> None:
        self.raw = raw

    @property
    def status(self) -> str:
        """`ok`, `denied`, `error`, `timeout`, `memory_limit`, `output_limit`, ... (see docs/serve.md)."""
        status: str = self.raw.get("status", "")
        return status

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def denied(self) -> bool:
        """The policy refused the code (`denied`, or `review_required`): nothing of it ran."""
        return self.status in ("denied", "review_required")

    @property
    def stdout(self) -> str:
        return self.raw.get("stdout") or ""

    @property
    def stderr(self) -> str:
        return self.raw.get("stderr") or ""

    @property
    def decision(self) -> str:
        decision: str = (self.raw.get("check") or {}).get("decision", "")
        return decision

    @property
    def findings(self) -> List[Finding]:
        return [Finding(f) for f in (self.raw.get("check") or {}).get("findings") or []]

    @property
    def error(self) -> Optional[Dict[str, Any]]:
        """The Python exception the program raised: `{"name", "value", "traceback"}`, or None."""
        return self.raw.get("error")

    @property
    def message(self) -> Optional[str]:
        return self.raw.get("message")

    @property
    def review(self) -> Optional[Dict[str, Any]]:
        """For `review_required`: `{"id", "status", "expires_at", ...}` of the held review, or None."""
        return self.raw.get("review")

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    #: The limits in force, to name a limit hit with its value (a cell's are its session's).
    limits: Optional[Dict[str, Any]] = None

    def for_model(self, budget: Optional[int] = None) -> ModelOutput:
        """What a model should read about this record: bounded text (`budget` characters, default
        `render.DEFAULT_TEXT_BUDGET`) and the images it showed (see `warden_client.render`)."""
        return render(self.raw, budget=budget, cell=isinstance(self, CellResult), limits=self.limits)

    def text_for_model(self, budget: Optional[int] = None) -> str:
        """`for_model(budget).text`: the output, value and images named, or why it did not succeed."""
        return self.for_model(budget).text

    @property
    def images(self) -> List[bytes]:
        """PNG images: a cell's shown figures and a figure value; a run's PNG files."""
        return [image.data for image in images_of(self.raw)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r})"


class RunResult(_Record):
    """The record of a one-shot run (`POST /v1/run`)."""

    @property
    def exit_code(self) -> Optional[int]:
        return self.raw.get("exit_code")

    @property
    def files(self) -> Dict[str, bytes]:
        """The files the program wrote in its work dir, by path (when the run returned them)."""
        out = {}
        for entry in self.raw.get("files") or []:
            content = entry.get("content_base64")
            if content is not None:
                out[entry["path"]] = base64.b64decode(content)
        return out

    @property
    def limits_hit(self) -> List[str]:
        return list(self.raw.get("limits_hit") or [])



class CellResult(_Record):
    """The record of one cell of a session (`POST /v1/sessions/{id}/execute`)."""

    @property
    def execution_count(self) -> Optional[int]:
        return self.raw.get("execution_count")

    @property
    def result(self) -> Optional[Dict[str, str]]:
        """The value of the cell's last expression as a MIME bundle (`text/plain` always), or None."""
        return self.raw.get("result")

    @property
    def result_text(self) -> Optional[str]:
        return (self.result or {}).get("text/plain")


    @property
    def session_alive(self) -> bool:
        return bool(self.raw.get("session_alive"))

