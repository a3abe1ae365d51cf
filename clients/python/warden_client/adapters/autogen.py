"""AutoGen (autogen-agentchat / autogen-core 0.4+): a `CodeExecutor` that runs code blocks in warden.

    from autogen_agentchat.agents import CodeExecutorAgent
    from warden_client.adapters.autogen import WardenCodeExecutor

    async with WardenCodeExecutor() as executor:      # or WardenCodeExecutor(Client(url, token=...))
        agent = CodeExecutorAgent("coder", model_client=model_client, code_executor=executor)
        await agent.run(task="Plot the sales by region from sales.csv")

Python blocks (`python`, `py`) run as cells of one warden session, so variables persist from block
to block and from one message to the next, as with AutoGen's Jupyter executor (`stateful=False`
runs every block as a one-shot `POST /v1/run` instead). The blocks of one call run in order and stop
at the first that does not succeed. The result is a `WardenCodeResult` (a `CodeResult`): `exit_code`
0 when every block succeeded, else 1; `output` the text a model should read (`warden_client.render`:
the blocks' output, `display()` outputs and values, figures named, bounded by `text_budget`
characters, default 20 000 per block; or the traceback; or — for code the policy refused — each
finding with its rule, line and hint; for code held for review, its id and how approval works; for a
limit, which and its value); `images` the figures as `autogen_core.Image`; `ran` whether the code
ran at all. Blocks in other languages are refused (warden runs Python only). Cancelling the call
(the agent's `CancellationToken`) ends the session, which interrupts the running cell; `restart()`
starts a fresh one. A session that is gone (the server restarted, it expired) is replaced by a new
one and the block fails with "your session was lost: its variables are gone".

AutoGen's `CodeExecutorAgent` frames every non-zero exit as "The script ran, then exited with an
error", a denial included, and passes text only. `WardenCodeExecutorAgent` (the same agent) says
"warden did not run this code" for a denial or a review instead, and puts the figures in the
model's context as images (a `UserMessage` with `autogen_core.Image`s) before the text.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union, cast

from autogen_agentchat.agents import CodeExecutorAgent
from autogen_core import CancellationToken, Component, Image
from autogen_core.code_executor import CodeBlock, CodeExecutor, CodeResult
from autogen_core.models import UserMessage
from pydantic import BaseModel
from typing_extensions import Self

from ..client import Client, Inputs, Session
from ..errors import SessionGone, WardenError
from ..render import SESSION_LOST_TEXT


@dataclass
class WardenCodeResult(CodeResult):
    """A `CodeResult` with what warden adds: the figures, and whether the code ran at all."""

    images: List[Image] = field(default_factory=list)
    #: False when warden did not run the (last) block: denied, held for review, session lost.
    ran: bool = True
    #: The text for the model, as the executor made it (agents may reframe `output`).
    text: str = ""


class _Gone(Exception):
    """The session was gone: a new one was started, and nothing of the block ran."""

PYTHON_LANGUAGES = ("python", "py", "python3")


class WardenCodeExecutorConfig(BaseModel):
    """What `dump_component()` saves of a `WardenCodeExecutor`: where warden is and how to use it.
    Never the token (a loaded executor reads `$WARDEN_TOKEN`), nor input files."""

    url: str
    policy: Optional[str] = None
    limits: Optional[Dict[str, int]] = None
    stateful: bool = True
    timeout: float = 120.0


class WardenCodeExecutor(CodeExecutor, Component[WardenCodeExecutorConfig]):
    """Runs AutoGen code blocks in warden.

    Args:
        client: the warden to use (default: `Client()`, the local socket or `$WARDEN_URL`).
        policy: the policy to name (default: the server's default for this client).
        limits: tighter limits (`wall_time_ms`, `memory_mib`, `stdout_bytes`; runs also `cpu_time_ms`).
        inputs: files to place in the work dir (`{"sales.csv": b"..."}`).
        stateful: one session for every block (default), or a one-shot run per block.
    """

    component_config_schema = WardenCodeExecutorConfig
    component_provider_override = "warden_client.adapters.autogen.WardenCodeExecutor"

    def __init__(
        self,
        client: Optional[Client] = None,
        *,
        policy: Optional[str] = None,
        limits: Optional[Dict[str, int]] = None,
        inputs: Inputs = None,
        stateful: bool = True,
        text_budget: Optional[int] = None,
    ) -> None:
        self.client = client or Client()
        self.text_budget = text_budget
        self.policy = policy
        self.limits = limits
        self.inputs: Union[Dict[str, Union[bytes, str]], List[Tuple[str, Union[bytes, str]]]]
        if hasattr(inputs, "items"):
            self.inputs = dict(cast(Mapping[str, Union[bytes, str]], inputs).items())
        else:
            self.inputs = list(cast(Iterable[Tuple[str, Union[bytes, str]]], inputs or []))
        self.stateful = stateful
        self._session: Optional[Session] = None
        #: Every record (cell or run) of this executor, in order.
        self.records: List[Any] = []

    def _run_block(self, code: str) -> Any:
        if not self.stateful:
            return self.client.run(code, policy=self.policy, inputs=self.inputs or None, limits=self.limits)
        if self._session is None or self._session.closed:
            self._session = self._new_session()
        try:
            cell = self._session.execute(code)
        except SessionGone as exc:
            self._session = self._new_session()
            raise _Gone(exc.message) from exc
        if not cell.session_alive:
            self._session.close()
        return cell

    def _new_session(self) -> Session:
        return self.client.session(policy=self.policy, limits=self.limits, inputs=self.inputs or None)

    async def execute_code_blocks(
        self, code_blocks: List[CodeBlock], cancellation_token: CancellationToken
    ) -> WardenCodeResult:
        outputs: List[str] = []
        images: List[Image] = []

        def result(exit_code: int, ran: bool = True) -> WardenCodeResult:
            text = "\n".join(outputs)
            return WardenCodeResult(exit_code=exit_code, output=text, images=images, ran=ran, text=text)

        for block in code_blocks:
            language = (block.language or "").strip().lower()
            if language not in PYTHON_LANGUAGES:
                outputs.append(
                    f"warden runs Python only; a `{block.language}` block was not run. Write the step in Python."
                )
                return result(1, ran=False)
            future = asyncio.ensure_future(asyncio.to_thread(self._run_block, block.code))
            cancellation_token.link_future(future)
            try:
                record = await future
            except asyncio.CancelledError:
                await self._end_session()
                raise
            except _Gone as exc:
                outputs.append(
                    f"{SESSION_LOST_TEXT} ({exc}) A new session has started; nothing of this block ran. "
                    "Define the variables and imports you need again."
                )
                return result(1, ran=False)
            except WardenError as exc:
                outputs.append(f"warden could not run the code: {exc}")
                return result(1, ran=False)
            self.records.append(record)
            view = record.for_model(self.text_budget)
            if view.text and view.text != "(the code ran and printed nothing)":
                outputs.append(view.text)
            for image in view.images:
                images.append(Image.from_base64(base64.b64encode(image.data).decode("ascii")))
            if not record.ok:
                return result(1, ran=record.status not in ("denied", "review_required"))
        return result(0)

    async def _end_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            try:
                await asyncio.to_thread(session.close)
            except WardenError:
                pass

    def _to_config(self) -> WardenCodeExecutorConfig:
        return WardenCodeExecutorConfig(
            url=self.client.url, policy=self.policy, limits=self.limits, stateful=self.stateful,
            timeout=self.client.timeout,
        )

    @classmethod
    def _from_config(cls, config: WardenCodeExecutorConfig) -> Self:
        return cls(Client(config.url, timeout=config.timeout), policy=config.policy, limits=config.limits,
                   stateful=config.stateful)

    async def start(self) -> None:
        """Nothing to start: the session begins with the first block."""

    async def stop(self) -> None:
        await self._end_session()

    async def restart(self) -> None:
        await self._end_session()


class WardenCodeExecutorAgent(CodeExecutorAgent):
    """AutoGen's `CodeExecutorAgent`, framing warden's results as what they are.

    For code warden did not run (a denial, a review, a lost session, a non-Python block) the model
    reads warden's own text instead of "The script ran, then exited with an error"; the figures a
    block showed go into the model's context as images, in a message before the text."""

    async def execute_code_block(
        self, code_blocks: List[CodeBlock], cancellation_token: CancellationToken
    ) -> CodeResult:
        result = await super().execute_code_block(code_blocks, cancellation_token)
        if not isinstance(result, WardenCodeResult):
            return result
        if not result.ran:
            result.output = f"The code did not run (exit code {result.exit_code}).\n{result.text}"
        if result.images:
            content: List[Any] = [f"The figures the code showed ({len(result.images)}), in order:"]
            content.extend(result.images)
            await self._model_context.add_message(UserMessage(content=content, source=self.name))
        return result
