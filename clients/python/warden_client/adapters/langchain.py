"""LangChain: a tool that runs the model's Python in warden, for any tool-calling agent.

    from langchain.agents import create_agent
    from warden_client.adapters.langchain import WardenPythonTool

    agent = create_agent(model, tools=[WardenPythonTool()])   # or WardenPythonTool(client=Client(url, token=...))
    agent.invoke({"messages": [("user", "What is the median of sales.csv's amount column?")]})

The tool (`run_python`, one argument `code`) runs each call as a cell of one warden session, so
variables, imports and files persist from call to call (`stateful=False` runs every call as a
one-shot `POST /v1/run`). A call that succeeds returns the record's text for a model
(`warden_client.render`: output, `display()` outputs and the last value, bounded by `text_budget`
characters, default 20 000, with a line saying what was cut); when the cell showed figures the
answer is a list of content blocks, the text then one `image` block (base64 PNG) per figure. A call
that does not succeed — denied by the policy, held for review, raised, timed out, hit a limit —
raises `ToolException` with the text a model can act on (the findings with their rules, lines and
hints and that nothing ran; the review id and how approval works; the traceback; the limit and its
value); with `handle_tool_error=True` (the default here) LangChain hands that text back to the model
as a `ToolMessage` with `status="error"`. A session that is gone (the server restarted, it expired)
is replaced by a new one and the model is told that its variables are gone. The description tells
the model which modules the policy allows, read from the server when the tool is made
(`describe_policy=False` skips it).
"""

from __future__ import annotations

import base64
from typing import Any, Dict, List, Optional, Type

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..client import Client, Session
from ..errors import SessionGone, WardenError
from ..render import SESSION_LOST_TEXT

_DESCRIPTION = (
    "Run Python code in a confined interpreter and get back what it printed and the value of its "
    "last expression. Variables, imports and files persist from one call to the next. There is no "
    "network; files are read and written in the current directory. Code is checked by a policy "
    "before it runs: a refusal names the rule and line and says how to fix the code."
)


class RunPythonInput(BaseModel):
    code: str = Field(description="Python source to run; print what you need to see.")


class WardenPythonTool(BaseTool):
    """A LangChain tool that runs Python in warden (see the module's documentation)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "run_python"
    description: str = _DESCRIPTION
    args_schema: Type[BaseModel] = RunPythonInput
    handle_tool_error: Any = True

    client: Any = None
    policy: Optional[str] = None
    limits: Optional[Dict[str, int]] = None
    stateful: bool = True
    describe_policy: bool = True
    text_budget: Optional[int] = None

    _session: Optional[Session] = PrivateAttr(default=None)
    _records: List[Any] = PrivateAttr(default_factory=list)

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        if self.client is None:
            self.client = Client()
        if self.describe_policy and self.description == _DESCRIPTION:
            try:
                policy = self.client.policy(self.policy)
            except WardenError:
                return  # the description stays general; the first call will say what is wrong
            modules = sorted({m.split(".")[0] for m in policy.get("allowed_imports", []) if m != "__future__"})
            if modules:
                self.description = f"{_DESCRIPTION} Modules you may import: {', '.join(modules)}."

    @property
    def records(self) -> List[Any]:
        """Every record (cell or run) of this tool, in order."""
        return self._records

    def _run(self, code: str, run_manager: Any = None) -> Any:
        try:
            if self.stateful:
                if self._session is None or self._session.closed:
                    self._session = self.client.session(policy=self.policy, limits=self.limits)
                try:
                    record = self._session.execute(code)
                except SessionGone as exc:
                    # Its state is gone with it: start again, and say so rather than run the code
                    # into a NameError.
                    self._session = self.client.session(policy=self.policy, limits=self.limits)
                    raise ToolException(
                        f"{SESSION_LOST_TEXT} ({exc.message}) A new session has started; nothing of this "
                        "code ran. Define the variables and imports you need again, then run it."
                    ) from exc
                if not record.session_alive:
                    self._session.close()
            else:
                record = self.client.run(code, policy=self.policy, limits=self.limits)
        except ToolException:
            raise
        except WardenError as exc:
            raise ToolException(f"warden could not run the code: {exc}") from exc
        self._records.append(record)
        view = record.for_model(self.text_budget)
        if not record.ok:
            raise ToolException(view.text)
        if not view.images:
            return view.text
        blocks: List[Dict[str, Any]] = [{"type": "text", "text": view.text}]
        for image in view.images:
            blocks.append({"type": "image", "base64": base64.b64encode(image.data).decode("ascii"),
                           "mime_type": image.mime})
        return blocks

    def close(self) -> None:
        """Ends the tool's session (a later call starts a new one)."""
        if self._session is not None:
            try:
                self._session.close()
            except WardenError:
                pass
            self._session = None
