"""One way to turn a run or cell record into what a model reads: bounded text, and images apart.

Every adapter (smolagents, AutoGen, LangChain) uses `render()`, through `RunResult.for_model()` and
`CellResult.for_model()`; `warden mcp` builds its tool results the same way (service/src/mcp.rs).

- **Bounded**: the text is at most `budget` characters (`DEFAULT_TEXT_BUDGET`, 20 000, unless the
  caller gives another). What is over it is cut from the middle of the longest parts, keeping each
  part's head and tail, with one line saying what was cut, how much, and how to see it.
- **Complete**: stdout, stderr, what `display()` showed (each bundle's `text/plain`), the value of
  the last expression (`Out[n]: ...`), and each image named in the text (`[image 1: PNG 640x480,
  attached]`) while its bytes go apart, for the frameworks that can show a model an image.
- **Actionable**: why it did not succeed, never cut: each finding with its rule, line and hint; the
  review id and how a person approves it; the schema errors with their instance path and
  requirement; which limit was hit and its value; a traceback once (it is not repeated from
  stderr); "your session was lost: its variables are gone" when the session is over.
"""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple

#: The default bound on the text a model reads about one record, in characters.
DEFAULT_TEXT_BUDGET = 20_000

#: The smallest budget honoured: below it the actionable detail alone would not fit.
MIN_TEXT_BUDGET = 1_000

#: What a model reads when its session is gone.
SESSION_LOST_TEXT = "Your session was lost: its variables are gone."

_LIMIT_UNITS = {
    "wall_time": ("wall_time_ms", "wall time", "ms"),
    "cpu_time": ("cpu_time_ms", "CPU time", "ms"),
    "memory": ("memory_mib", "memory", "MiB"),
    "stdout": ("stdout_bytes", "stdout size", "bytes"),
    "stderr": ("stderr_bytes", "stderr size", "bytes"),
    "pids": ("pids", "number of processes", ""),
}

_STATUS_LIMIT = {"timeout": "wall_time", "memory_limit": "memory", "output_limit": "stdout"}


class Image:
    """An image a run or cell produced: its bytes, MIME type, and where it came from."""

    def __init__(self, data: bytes, mime: str = "image/png", name: str = "") -> None:
        self.data = data
        self.mime = mime
        #: `display 1`, `Out[3]`, or the file's path (a one-shot run's `figure-1.png`).
        self.name = name

    @property
    def size(self) -> Optional[Tuple[int, int]]:
        """(width, height) read from the PNG header, or None."""
        if self.mime == "image/png" and len(self.data) >= 24 and self.data[:8] == b"\x89PNG\r\n\x1a\n":
            width, height = struct.unpack(">II", self.data[16:24])
            return width, height
        return None

    def describe(self, index: int) -> str:
        size = self.size
        shape = f" {size[0]}x{size[1]}" if size else ""
        kind = self.mime.split("/")[-1].upper()
        origin = f" from {self.name}" if self.name else ""
        return f"[image {index}: {kind}{shape}{origin}, attached]"

    def __repr__(self) -> str:
        return f"Image({self.mime!r}, {len(self.data)} bytes, name={self.name!r})"


class ModelOutput:
    """What a model gets about one record: `text` (bounded) and `images` (named in the text)."""

    def __init__(self, text: str, images: List[Image], ok: bool, cut: int = 0) -> None:
        self.text = text
        self.images = images
        #: Whether the run or cell succeeded.
        self.ok = ok
        #: How many characters the budget cut.
        self.cut = cut

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"ModelOutput(ok={self.ok}, {len(self.text)} chars, {len(self.images)} images)"


class _Part:
    def __init__(self, label: str, text: str, what: str, how: str) -> None:
        self.label = label
        self.text = text
        #: What the cut line calls it (`stdout`, `the value`).
        self.what = what
        #: How to see what was cut.
        self.how = how


def _clip(part: _Part, room: int) -> Tuple[str, int]:
    """`part.text` in at most `room` characters: its head and tail and one line about the middle."""
    text = part.text
    if len(text) <= room:
        return text, 0
    marker_room = 400
    keep = max(0, room - marker_room)
    head_len = (keep * 2) // 3
    tail_len = keep - head_len
    # Cut at line ends when one is near, so lines are whole.
    head = text[:head_len]
    newline = head.rfind("\n")
    if newline > head_len // 2:
        head = head[: newline + 1]
    tail = text[len(text) - tail_len:] if tail_len else ""
    newline = tail.find("\n")
    if 0 <= newline < tail_len // 2:
        tail = tail[newline + 1:]
    cut = len(text) - len(head) - len(tail)
    first_line = head.count("\n") + 1
    last_line = text.count("\n") + 1 - tail.count("\n")
    lines = f" (lines {first_line:,}-{last_line:,})" if last_line > first_line else ""
    marker = (
        f"[... warden cut {cut:,} of {len(text):,} characters of {part.what} here{lines}, to keep this "
        f"under {room:,} characters; {part.how} ...]"
    )
    if not head.endswith("\n"):
        head += "\n"
    return f"{head}{marker}\n{tail}", cut


def _fit(parts: Sequence[_Part], room: int) -> Tuple[List[str], int]:
    """Shares `room` among the parts: short ones whole, the rest an equal share each."""
    room = max(room, 0)
    sizes = {index: len(part.text) for index, part in enumerate(parts)}
    shares: Dict[int, int] = {}
    left = room
    pending = sorted(sizes, key=lambda index: sizes[index])
    while pending:
        share = left // len(pending)
        index = pending[0]
        if sizes[index] <= share:
            shares[index] = sizes[index]
            left -= sizes[index]
            pending.pop(0)
            continue
        for index in pending:
            shares[index] = share
        break
    out, cut = [], 0
    for index, part in enumerate(parts):
        text, lost = _clip(part, shares[index])
        cut += lost
        out.append(part.label + text if part.label else text)
    return out, cut


def _finding(raw: Dict[str, Any]) -> str:
    span = raw.get("span") or {}
    where = ""
    if span.get("line") is not None:
        where = f" (line {span['line']}" + (f", column {span['column']}" if span.get("column") else "") + ")"
    text = f"- {raw.get('rule', '')}{where}: {raw.get('message', '')}"
    if raw.get("hint"):
        text += f"\n  hint: {raw['hint']}"
    return text


def _limit_text(name: str, limits: Dict[str, Any]) -> str:
    key, words, unit = _LIMIT_UNITS.get(name, (name, name.replace("_", " "), ""))
    value = limits.get(key)
    if value is None:
        return f"the {words} limit"
    return f"the {words} limit ({value:,}{' ' + unit if unit else ''}; `{key}`)"


def _limits_detail(raw: Dict[str, Any], status: str, limits: Dict[str, Any]) -> str:
    hit = list(raw.get("limits_hit") or [])
    if not hit and status in _STATUS_LIMIT:
        hit = [_STATUS_LIMIT[status]]
    if not hit:
        return ""
    names = ", ".join(_limit_text(name, limits) for name in hit)
    advice = {
        "wall_time": "make the code faster or do less per call",
        "cpu_time": "make the code faster or do less per call",
        "memory": "use less memory (smaller data, chunks, fewer copies)",
        "stdout": "print less (a summary, `head()`, or write the data to a file)",
        "stderr": "write less to stderr",
        "pids": "start fewer processes or threads",
    }
    hints = sorted({advice[name] for name in hit if name in advice})
    text = f"It hit {names}."
    if hints:
        text += " To stay within it: " + "; ".join(hints) + "."
    return text


def _review_detail(raw: Dict[str, Any]) -> List[str]:
    review = raw.get("review") or {}
    review_id = review.get("id")
    lines = ["warden did not run this code yet: the policy requires a person to review it first."]
    if review_id:
        lines.append(
            f"It is held for review as `{review_id}` (status `{review.get('status', 'pending')}`"
            + (f", expires {review['expires_at']}" if review.get("expires_at") else "")
            + ")."
        )
        lines.append(
            f"How approval works: a person with approver rights runs `warden review approve {review_id}` "
            f"on the server's host (or rejects it); once approved, the same code runs once with "
            f"`Client.run_review(\"{review_id}\")` (POST /v1/reviews/{review_id}/run). You may also "
            "change the code so that no rule needs a review."
        )
    elif raw.get("message"):
        lines.append(str(raw["message"]))
    findings = (raw.get("check") or {}).get("findings") or []
    if findings:
        lines.append("Findings:")
        lines.extend(_finding(f) for f in findings)
    return lines


def _validation_detail(raw: Dict[str, Any]) -> List[str]:
    validation = raw.get("validation") or {}
    where = {"stdout": "the whole of stdout", "last_line": "the last non-empty line of stdout",
             "file": "the file result.json"}.get(validation.get("result", ""), "the result")
    lines = [f"The output is not valid: {where} must be one JSON document that satisfies the schema."]
    for error in validation.get("errors") or []:
        path = error.get("instance_path", "")
        lines.append(
            f"- at `{path or '/'}` (instance path): {error.get('message', '')}"
            + (f" (schema: `{error['schema_path']}`)" if error.get("schema_path") else "")
        )
    if raw.get("message") and not validation.get("errors"):
        lines.append(str(raw["message"]))
    return lines


def _traceback(error: Dict[str, Any]) -> str:
    traceback = error.get("traceback")
    if isinstance(traceback, list):
        traceback = "\n".join(traceback)
    if not traceback:
        traceback = f"{error.get('name', 'Error')}: {error.get('value', '')}"
    traceback = traceback.rstrip("\n")
    if error.get("hint"):
        traceback += f"\nhint: {error['hint']}"
    return traceback


def _without(stderr: str, block: Optional[str]) -> str:
    """stderr without the traceback the record's `error` already carries (said once, not twice)."""
    if not block:
        return stderr
    block = block.rstrip("\n")
    at = stderr.rfind(block)
    if at < 0:
        return stderr
    return (stderr[:at] + stderr[at + len(block):]).strip("\n")


def images_of(raw: Dict[str, Any]) -> List[Image]:
    """The images of a record: a cell's `display` and `result` bundles, a run's PNG files."""
    import base64

    images = []
    for index, bundle in enumerate(raw.get("display") or [], start=1):
        if isinstance(bundle, dict) and "image/png" in bundle:
            images.append(Image(base64.b64decode(bundle["image/png"]), "image/png", f"display {index}"))
    result = raw.get("result")
    if isinstance(result, dict) and "image/png" in result:
        count = raw.get("execution_count")
        images.append(Image(base64.b64decode(result["image/png"]), "image/png", f"Out[{count}]"))
    for entry in raw.get("files") or []:
        path = str(entry.get("path", ""))
        if path.lower().endswith(".png") and entry.get("content_base64") is not None:
            images.append(Image(base64.b64decode(entry["content_base64"]), "image/png", path))
    return images


def render(
    raw: Dict[str, Any],
    *,
    budget: Optional[int] = None,
    cell: bool = False,
    limits: Optional[Dict[str, Any]] = None,
) -> ModelOutput:
    """The model's view of one record (`raw`: the JSON of a run or cell record).

    `cell` says it is a session's cell; `limits` are the limits in force (a run record carries its
    own; a cell's are its session's), so that a limit hit is named with its value."""
    budget = max(MIN_TEXT_BUDGET, DEFAULT_TEXT_BUDGET if budget is None else int(budget))
    status = raw.get("status", "")
    ok = status == "ok"
    limits = dict(limits or raw.get("limits") or {})
    detail: List[str] = []

    decision = (raw.get("check") or {}).get("decision", "")
    if status == "denied" and decision == "review":
        # A session's cell: sessions take no approvals, so nothing is held.
        detail.append(
            "warden did not run this code: the policy requires a person to review it first, and a "
            "session's cells cannot be approved. Change the code so that no rule needs a review, or "
            "submit it as a one-shot run (`Client.run`), which holds it for review with an id a "
            "person approves (`warden review approve ID`)."
        )
        findings = (raw.get("check") or {}).get("findings") or []
        if findings:
            detail.append("Findings:")
            detail.extend(_finding(f) for f in findings)
        detail.append("Nothing of this code ran" + ("; the session kept its state." if cell else "."))
    elif status == "denied":
        findings = (raw.get("check") or {}).get("findings") or []
        verdict = (raw.get("check") or {}).get("decision", "deny")
        detail.append(f"warden did not run this code: the policy denied it (decision `{verdict}`).")
        if findings:
            detail.append("Findings:")
            detail.extend(_finding(f) for f in findings)
        elif raw.get("message"):
            detail.append(str(raw["message"]))
        detail.append(
            "Nothing of this code ran" + ("; the session kept its state" if cell else "")
            + ". Change the code as the hints say and try again."
        )
    elif status == "review_required":
        detail.extend(_review_detail(raw))
        if cell:
            detail.append("Nothing of this code ran; the session kept its state.")
    elif status == "error" and raw.get("error"):
        detail.append(_traceback(raw["error"]))
    elif status == "output_invalid":
        detail.extend(_validation_detail(raw))
    elif not ok:
        limit = _limits_detail(raw, status, limits)
        what = "cell" if cell else "run"
        message = raw.get("message")
        detail.append(message or f"The {what} ended with status `{status}`.")
        if limit:
            detail.append(limit)
    if cell and not raw.get("session_alive", True) and status not in ("denied", "review_required"):
        detail.append(SESSION_LOST_TEXT + " A new session starts with the next call: define what you need again.")
    if not ok and raw.get("stopped_by"):
        stopped = raw["stopped_by"]
        if isinstance(stopped, dict):
            said = ", ".join(f"{k} `{v}`" for k, v in stopped.items() if v)
            if said:
                detail.append(f"Stopped by: {said}.")

    error = raw.get("error") or {}
    traceback = error.get("traceback") if isinstance(error, dict) else None
    if isinstance(traceback, list):
        traceback = "\n".join(traceback)
    stdout = raw.get("stdout") or ""
    stderr = _without(raw.get("stderr") or "", traceback)

    how_print = (
        "the whole text is in the record; to see the cut part, print less at a time or write it to a file "
        "and print slices of it"
    )
    parts: List[_Part] = []
    if stdout:
        parts.append(_Part("", stdout.rstrip("\n"), "stdout", how_print))
    if stderr.strip():
        parts.append(_Part("[stderr]\n", stderr.rstrip("\n"), "stderr", how_print))
    notes = []
    if raw.get("stdout_truncated"):
        notes.append("stdout went past its cap (`stdout_bytes`) and was truncated by the server")
    if raw.get("stderr_truncated"):
        notes.append("stderr went past its cap and was truncated by the server")

    images = images_of(raw)
    image_index = {id(image): number for number, image in enumerate(images, start=1)}
    display_lines = []
    for index, bundle in enumerate(raw.get("display") or [], start=1):
        if not isinstance(bundle, dict):
            continue
        named = [im for im in images if im.name == f"display {index}"]
        if named:
            display_lines.append(named[0].describe(image_index[id(named[0])]))
        elif bundle.get("text/plain") is not None:
            parts.append(_Part("", str(bundle["text/plain"]).rstrip("\n"), f"display {index}",
                               "display a smaller part (e.g. `df.head(20)`)"))
    if display_lines:
        parts.append(_Part("", "\n".join(display_lines), "the images", "look at fewer images"))
    result = raw.get("result")
    if isinstance(result, dict):
        count = raw.get("execution_count")
        named = [im for im in images if im.name == f"Out[{count}]"]
        if named:
            parts.append(_Part(f"Out[{count}]: ", named[0].describe(image_index[id(named[0])]), "the value", ""))
        elif result.get("text/plain") is not None:
            parts.append(_Part(f"Out[{count}]: ", str(result["text/plain"]), "the value",
                               "show a smaller part of the value (e.g. `x[:50]`, `df.head(20)`)"))
    file_images = [im for im in images if not im.name.startswith(("display ", "Out["))]
    if file_images:
        parts.append(_Part("", "\n".join(im.describe(image_index[id(im)]) for im in file_images),
                           "the images", "look at fewer images"))

    detail_text = "\n".join(d for d in detail if d)
    # The detail is what the model acts on: it is kept whole up to half the budget.
    detail_part = _Part("", detail_text, "this message", "fix the first problem and run again")
    detail_room = min(len(detail_text), budget // 2)
    detail_text, detail_cut = _clip(detail_part, detail_room) if detail_text else ("", 0)
    notes_text = "\n".join(f"[{note}]" for note in notes)
    separators = len(parts) + 2
    room = budget - len(detail_text) - len(notes_text) - separators
    texts, cut = _fit(parts, room)
    out = [t for t in texts if t]
    if notes_text:
        out.append(notes_text)
    if detail_text:
        out.append(detail_text)
    text = "\n".join(out)
    if len(text) > budget:
        # Many parts each with a cut line: the last resort keeps the bound.
        over = len(text) - budget + 120
        cut += over
        text = text[: budget - 120] + f"\n[... warden cut the last {over:,} characters to stay under {budget:,} ...]"
    if not text and ok:
        text = "(the code ran and printed nothing)"
    return ModelOutput(text, images, ok, cut + detail_cut)
