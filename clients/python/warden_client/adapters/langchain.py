"""LangChain: a tool that runs the model's Python in warden, for any tool-calling agent.

    from langchain.agents import create_agent
    from warden_client.adapters.langchain import WardenPythonTool

    agent = create_agent(model, tools=[WardenPythonTool()])   # or WardenPythonTool(client=Client(url, token=...))
    agent.invoke({"messages": [("user", "What is the median of sales.csv's amount column?")]})

The tool (`run_python`, one argument `code`) runs each call as a cell of one warden session, so
variables, imports and files persist from call to call (`stateful=False` runs every call as a
one-shot `POST /v1/run`). A call that succeeds returns its output and the value of its last
expression. A call that does not — denied by the policy, raised, timed out, hit a limit — raises
`ToolException` with the text a model can act on (the traceback, or each finding with its rule,
line and hint); with `handle_tool_error=True` (the default here) LangChain hands that text back to
the model as a `ToolMessage` with `status="error"`. The description tells the model which modules
the policy allows, read from the server when the tool is made (`describe_policy=False` skips it).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Type

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..client import Client, Session
from ..errors import WardenError

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

    def _run(self, code: str, run_manager: Any = None) -> str:
        try:
            if self.stateful:
                if self._session is None or self._session.closed:
                    self._session = self.client.session(policy=self.policy, limits=self.limits)
                record = self._session.execute(code)
                if not record.session_alive:
                    self._session.close()
            else:
                record = self.client.run(code, policy=self.policy, limits=self.limits)
        except WardenError as exc:
            raise ToolException(f"warden could not run the code: {exc}") from exc
        self._records.append(record)
        text = record.text_for_model()
        if not record.ok:
            raise ToolException(text)
        return text or "(the code ran and printed nothing)"

    def close(self) -> None:
        """Ends the tool's session (a later call starts a new one)."""
        if self._session is not None:
            try:
                self._session.close()
            except WardenError:
                pass
            self._session = None
