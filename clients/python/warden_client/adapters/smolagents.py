"""smolagents: every code step of a `CodeAgent` runs as a cell of one warden session.

    from smolagents import CodeAgent
    from warden_client.adapters.smolagents import WardenExecutor

    executor = WardenExecutor()                      # the local warden; or WardenExecutor(Client(url, token=...))
    agent = CodeAgent(tools=[], model=model, executor=executor,
                      additional_authorized_imports=executor.authorized_imports())
    agent.run("How many rows does data.csv have?")

What this executor does with smolagents' executor interface (`smolagents.local_python_executor.PythonExecutor`):

- `__call__(code)`: runs the step as a cell; variables persist from step to step, as in smolagents'
  own executors. The step's logs are the record's text for a model (`warden_client.render`: output,
  `display()` outputs, figures named, bounded by `text_budget` characters, default 20 000, with a
  line saying what was cut); its output is the value of the last expression. A cell that raised,
  was denied by the policy, was held for review, timed out or hit a limit raises `WardenStepError`,
  whose text (the traceback; each finding with its rule, line and hint; the review id and how
  approval works; the limit and its value) the agent puts in the model's next prompt. A session that
  is gone is replaced by a new one (`final_answer` and the tools defined again) and the step fails
  with "your session was lost: its variables are gone".
- Figures: `CodeAgent(..., step_callbacks=[executor.attach_images])` puts the images a step showed
  into the step's `observations_images` (PIL images), which smolagents shows a vision model.
- `final_answer(value)` works in the cell: it stops the step and hands the value back (JSON values
  come back as they were; anything else as its `repr`).
- `send_tools(tools)`: `final_answer` is defined in the session. Other tools run on the host in
  smolagents, and the jail has neither the host nor smolagents: by default such a tool is refused
  (`UnsupportedTool`, before the model is asked anything). With `tools="source"` the source of each
  tool class is sent into the session instead (checked by the policy like any cell; a tool that
  imports something the policy denies is refused with the findings).
- `send_variables(variables)`: JSON-serialisable values are defined in the session by name; others
  are refused (`TypeError`).
- `cleanup()` (called by `CodeAgent.cleanup()` and its context manager) ends the session.
"""

from __future__ import annotations

import json
import keyword
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union, cast

from smolagents.local_python_executor import CodeOutput, PythonExecutor
from smolagents.tools import Tool

from ..client import Client, Inputs, Session
from ..errors import SessionGone, WardenError
from ..render import DEFAULT_TEXT_BUDGET, SESSION_LOST_TEXT, render
from ..results import CellResult

FINAL_ANSWER_CLASS = "WardenFinalAnswer"

_FINAL_ANSWER_CODE = f'''\
import json as _warden_json


class {FINAL_ANSWER_CLASS}(BaseException):
    """Raised by final_answer() to end the agent's step with its value (a BaseException, so that
    `except Exception` in the step does not swallow it, as in smolagents' own executors)."""


def final_answer(answer):
    """Ends the task with this answer."""
    try:
        encoded = "json:" + _warden_json.dumps(answer)
    except (TypeError, ValueError):
        encoded = "repr:" + repr(answer)
    raise {FINAL_ANSWER_CLASS}(encoded)
'''

_TOOL_BASE_CODE = '''\
class Tool:
    """The base of the tools smolagents sends as source."""

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError
'''


class WardenStepError(WardenError):
    """A step that did not succeed in warden: denied, raised, timed out or hit a limit.

    `cell` is the cell's record; `str(error)` is the text meant for the model."""

    def __init__(self, cell: Optional[CellResult], text: Optional[str] = None) -> None:
        if text is None:
            text = (cell.text_for_model() if cell is not None else "") or "the step did not succeed"
        super().__init__(text)
        self.cell = cell

    def __str__(self) -> str:
        return self.message


class UnsupportedTool(WardenError):
    """A tool the session cannot hold (its code lives on the host), refused before the run starts."""


class WardenExecutor(PythonExecutor):
    """A smolagents Python executor that runs code in a warden session.

    Args:
        client: the warden to use (default: `Client()`, the local socket or `$WARDEN_URL`).
        policy: the policy to name (default: the server's default for this client).
        limits: tighter session limits: `wall_time_ms` (each step), `memory_mib`, `stdout_bytes`.
        inputs: files to place in the work dir before the first step (`{"data.csv": b"..."}`).
        tools: `"refuse"` (default) refuses tools other than `final_answer`; `"source"` sends their
            class source into the session.
    """

    def __init__(
        self,
        client: Optional[Client] = None,
        *,
        policy: Optional[str] = None,
        limits: Optional[Dict[str, int]] = None,
        inputs: Inputs = None,
        tools: str = "refuse",
        text_budget: Optional[int] = None,
    ) -> None:
        if tools not in ("refuse", "source"):
            raise ValueError('tools must be "refuse" or "source"')
        self.client = client or Client()
        self.policy = policy
        self.limits = limits
        self.inputs: Union[Dict[str, Union[bytes, str]], List[Tuple[str, Union[bytes, str]]]]
        if hasattr(inputs, "items"):
            self.inputs = dict(cast(Mapping[str, Union[bytes, str]], inputs).items())
        else:
            self.inputs = list(cast(Iterable[Tuple[str, Union[bytes, str]]], inputs or []))
        self.tools_mode = tools
        self.text_budget = text_budget
        self.session: Optional[Session] = None
        self._tools_code: List[str] = []
        #: Every cell record of this executor, in order (for logs and tests).
        self.cells: List[CellResult] = []
        self._pending_images: List[Any] = []

    # --- the session -----------------------------------------------------------------------------

    def _session(self) -> Session:
        if self.session is None or self.session.closed:
            self.session = self.client.session(policy=self.policy, limits=self.limits, inputs=self.inputs or None)
            self._define(_FINAL_ANSWER_CODE)
            for code in self._tools_code:
                self._define(code)
        return self.session

    def _define(self, code: str) -> None:
        """Runs set-up code (final_answer, tools, variables); anything but success raises."""
        assert self.session is not None
        cell = self.session.execute(code)
        self.cells.append(cell)
        if not cell.ok:
            raise WardenStepError(cell)

    def authorized_imports(self) -> List[str]:
        """The modules the policy lets code import, for `CodeAgent(additional_authorized_imports=...)`
        (so the prompt tells the model what it may use)."""
        policy = self.client.policy(self.policy)
        return sorted({name.split(".")[0] for name in policy.get("allowed_imports", []) if name != "__future__"})

    # --- smolagents' PythonExecutor --------------------------------------------------------------

    def send_tools(self, tools: Dict[str, Tool]) -> None:
        codes = []
        for name, tool in tools.items():
            if name == "final_answer":
                continue
            if self.tools_mode == "refuse" or not isinstance(tool, Tool):
                raise UnsupportedTool(
                    f"tool {name!r} runs on the host, and warden runs the agent's code in a jail without "
                    "it: pass no such tools, or WardenExecutor(tools=\"source\") to send the tool's class "
                    "source into the session (checked by the policy like any step)"
                )
            from smolagents.utils import instance_to_source

            source = instance_to_source(tool, base_cls=Tool).replace("from smolagents.tools import Tool", "")
            codes.append(f"{source}\n\n{name} = {type(tool).__name__}()\n")
        if codes:
            codes.insert(0, _TOOL_BASE_CODE)
        self._tools_code = codes
        if self.session is None or self.session.closed:
            self._session()  # a new session defines final_answer and the tools
            return
        for code in codes:
            self._define(code)

    def send_variables(self, variables: Dict[str, Any]) -> None:
        if not variables:
            return
        lines = []
        for name, value in variables.items():
            if not name.isidentifier() or keyword.iskeyword(name):
                raise TypeError(f"variable {name!r} is not a Python name")
            try:
                encoded = json.dumps(value)
            except (TypeError, ValueError) as exc:
                raise TypeError(
                    f"variable {name!r} ({type(value).__name__}) cannot be sent to warden: only JSON "
                    "values can; upload files with inputs= instead"
                ) from exc
            lines.append(f"{name} = _warden_json.loads({encoded!r})")
        self._session()
        self._define("\n".join(lines) + "\n")

    def __call__(self, code_action: str) -> CodeOutput:
        session = self._session()
        self._pending_images = []
        try:
            cell = session.execute(code_action)
        except SessionGone as exc:
            self.session = None
            self._session()  # a new session, with final_answer and the tools defined again
            raise WardenStepError(
                None,
                f"{SESSION_LOST_TEXT} ({exc.message}) A new session has started; nothing of this step "
                "ran. Define the variables and imports you need again.",
            ) from exc
        self.cells.append(cell)
        self._pending_images = cell.for_model(self.text_budget).images
        if cell.status == "error" and (cell.error or {}).get("name") == FINAL_ANSWER_CLASS:
            return CodeOutput(output=_decode_final_answer(cell), logs=cell.stdout, is_final_answer=True)
        if not cell.ok:
            if not cell.session_alive and self.session is not None:
                self.session.close()  # the next step starts a fresh session
            raise WardenStepError(cell, cell.text_for_model(self.text_budget))
        # The value goes as smolagents' output ("Last output from code snippet"), the rest as logs;
        # both within the budget.
        budget = self.text_budget or DEFAULT_TEXT_BUDGET
        output = cell.result_text
        if output is not None and len(output) > budget // 4:
            output = _clip_value(output, budget // 4)
        view = render(
            dict(cell.raw, result=None if cell.result and "image/png" not in cell.result else cell.raw.get("result")),
            budget=budget - len(output or ""), cell=True, limits=cell.limits,
        )
        logs = "" if view.text == "(the code ran and printed nothing)" else view.text
        return CodeOutput(output=output, logs=logs, is_final_answer=False)

    def attach_images(self, memory_step: Any, agent: Any = None) -> None:
        """A smolagents step callback: the images of the step's cell (figures shown, a figure
        value) become the step's `observations_images`, which the agent shows a vision model."""
        images, self._pending_images = self._pending_images, []
        if not images or not hasattr(memory_step, "observations_images"):
            return
        import io

        from PIL import Image as PILImage

        pictures = []
        for image in images:
            picture = PILImage.open(io.BytesIO(image.data))
            picture.load()
            pictures.append(picture)
        memory_step.observations_images = (memory_step.observations_images or []) + pictures

    def cleanup(self) -> None:
        if self.session is not None:
            try:
                self.session.close()
            except WardenError:
                pass
            self.session = None


def _clip_value(text: str, room: int) -> str:
    head = text[: room * 2 // 3]
    tail = text[len(text) - room // 3:]
    return (
        f"{head}\n[... warden cut {len(text) - len(head) - len(tail):,} of {len(text):,} characters of the "
        f"value here; show a smaller part of it (e.g. `x[:50]`, `df.head(20)`) ...]\n{tail}"
    )


def _decode_final_answer(cell: CellResult) -> Any:
    value = str((cell.error or {}).get("value", ""))
    if value.startswith("json:"):
        return json.loads(value[len("json:"):])
    if value.startswith("repr:"):
        return value[len("repr:"):]
    return value
