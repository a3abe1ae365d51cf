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
        return self.raw.get("status", "")

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
        return (self.raw.get("check") or {}).get("decision", "")

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

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def _denial_text(self, state_note: str) -> str:
        lines = [f"warden did not run this code: the policy's decision is `{self.decision or self.status}`."]
        findings = self.findings
        if findings:
            lines.append("Findings:")
            lines.extend(f"- {finding.describe()}" for finding in findings)
        elif self.message:
            lines.append(self.message)
        lines.append(f"Nothing of this code ran{state_note}. Change the code as the hints say and try again.")
        return "\n".join(lines)

    def _error_text(self) -> str:
        error = self.error or {}
        traceback = error.get("traceback")
        if isinstance(traceback, list):
            traceback = "\n".join(traceback)
        if not traceback:
            traceback = f"{error.get('name', 'Error')}: {error.get('value', '')}"
        return traceback

    def _output_text(self) -> str:
        parts = []
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("[stderr]\n" + self.stderr.rstrip("\n"))
        return "\n".join(parts)

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

    def text_for_model(self) -> str:
        """What a model should read about this run: its output, or why it did not succeed."""
        if self.denied:
            return self._denial_text("")
        output = self._output_text()
        if self.ok:
            return output
        if self.status == "error" and self.error:
            detail = self._error_text()
        else:
            detail = self.message or f"the run ended with status `{self.status}`"
        return "\n".join(p for p in (output, detail) if p)


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
    def images(self) -> List[bytes]:
        """PNG images the cell showed, and the result's if it is a figure."""
        bundles = list(self.raw.get("display") or [])
        if self.result:
            bundles.append(self.result)
        return [base64.b64decode(b["image/png"]) for b in bundles if "image/png" in b]

    @property
    def session_alive(self) -> bool:
        return bool(self.raw.get("session_alive"))

    def text_for_model(self) -> str:
        """What a model should read about this cell: output and value, or why it did not succeed."""
        if self.denied:
            return self._denial_text("; the session kept its state")
        output = self._output_text()
        if self.ok:
            parts = [output] if output else []
            if self.result_text is not None:
                parts.append(f"Out[{self.execution_count}]: {self.result_text}")
            return "\n".join(parts)
        if self.status == "error" and self.error:
            detail = self._error_text()
        else:
            detail = self.message or f"the cell ended with status `{self.status}`"
        if not self.session_alive:
            detail += "\nThe session has ended: its variables are lost."
        return "\n".join(p for p in (output, detail) if p)
