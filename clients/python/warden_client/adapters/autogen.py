"""AutoGen (autogen-agentchat / autogen-core 0.4+): a `CodeExecutor` that runs code blocks in warden.

    from autogen_agentchat.agents import CodeExecutorAgent
    from warden_client.adapters.autogen import WardenCodeExecutor

    async with WardenCodeExecutor() as executor:      # or WardenCodeExecutor(Client(url, token=...))
        agent = CodeExecutorAgent("coder", model_client=model_client, code_executor=executor)
        await agent.run(task="Plot the sales by region from sales.csv")

Python blocks (`python`, `py`) run as cells of one warden session, so variables persist from block
to block and from one message to the next, as with AutoGen's Jupyter executor (`stateful=False`
runs every block as a one-shot `POST /v1/run` instead). The blocks of one call run in order and stop
at the first that does not succeed. The `CodeResult` is `exit_code` 0 when every block succeeded,
else 1, and `output` the text a model should read: the blocks' output and values, or the
traceback, or — for code the policy refused — each finding with its rule, line and hint. Blocks in
other languages are refused (warden runs Python only). Cancelling the call (the agent's
`CancellationToken`) ends the session, which interrupts the running cell; `restart()` starts a
fresh one.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional

from autogen_core import CancellationToken, Component
from autogen_core.code_executor import CodeBlock, CodeExecutor, CodeResult
from pydantic import BaseModel
from typing_extensions import Self

from ..client import Client, Inputs, Session
from ..errors import WardenError

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
    ) -> None:
        self.client = client or Client()
        self.policy = policy
        self.limits = limits
        self.inputs = dict(inputs.items()) if hasattr(inputs, "items") else list(inputs or [])
        self.stateful = stateful
        self._session: Optional[Session] = None
        #: Every record (cell or run) of this executor, in order.
        self.records: List[Any] = []

    def _run_block(self, code: str) -> Any:
        if not self.stateful:
            return self.client.run(code, policy=self.policy, inputs=self.inputs or None, limits=self.limits)
        if self._session is None or self._session.closed:
            self._session = self.client.session(policy=self.policy, limits=self.limits, inputs=self.inputs or None)
        cell = self._session.execute(code)
        if not cell.session_alive:
            self._session.close()
        return cell

    async def execute_code_blocks(
        self, code_blocks: List[CodeBlock], cancellation_token: CancellationToken
    ) -> CodeResult:
        outputs: List[str] = []
        for block in code_blocks:
            language = (block.language or "").strip().lower()
            if language not in PYTHON_LANGUAGES:
                outputs.append(
                    f"warden runs Python only; a `{block.language}` block was not run. Write the step in Python."
                )
                return CodeResult(exit_code=1, output="\n".join(outputs))
            future = asyncio.ensure_future(asyncio.to_thread(self._run_block, block.code))
            cancellation_token.link_future(future)
            try:
                record = await future
            except asyncio.CancelledError:
                await self._end_session()
                raise
            except WardenError as exc:
                outputs.append(f"warden could not run the code: {exc}")
                return CodeResult(exit_code=1, output="\n".join(outputs))
            self.records.append(record)
            text = record.text_for_model()
            if text:
                outputs.append(text)
            if not record.ok:
                return CodeResult(exit_code=1, output="\n".join(outputs))
        return CodeResult(exit_code=0, output="\n".join(outputs))

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
