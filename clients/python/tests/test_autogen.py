"""AutoGen's own `CodeExecutorAgent` loop, with autogen-ext's `ReplayChatCompletionClient` as the
scripted model, executing every code block in warden."""

from __future__ import annotations

import asyncio
import json
import unittest
import warnings

from autogen_agentchat.agents import CodeExecutorAgent
from autogen_agentchat.messages import CodeExecutionEvent
from autogen_core import CancellationToken, Image
from autogen_core.code_executor import CodeBlock
from autogen_core.models import ModelFamily, ModelInfo
from autogen_ext.models.replay import ReplayChatCompletionClient

from warden_client import errors
from warden_client.adapters.autogen import WardenCodeExecutor, WardenCodeExecutorAgent, WardenCodeResult

from . import support

# Structured output is what CodeExecutorAgent needs to ask the model whether to retry after an error.
MODEL_INFO = ModelInfo(vision=False, function_calling=False, json_output=True, family=ModelFamily.UNKNOWN,
                       structured_output=True)


# A vision model: AutoGen removes images from the prompts of the others.
VISION_MODEL_INFO = ModelInfo(vision=True, function_calling=False, json_output=True, family=ModelFamily.UNKNOWN,
                              structured_output=True)


def block(code: str, lead: str = "Here is the code.") -> str:
    return f"{lead}\n```python\n{code}\n```"


def prompt_text(call) -> str:
    return "\n".join(support.flatten(m.content) for m in call["messages"])


class AutogenCodeExecutorAgent(unittest.TestCase):
    def setUp(self):
        self.client = support.tcp_client()
        warnings.filterwarnings("ignore", message="No approval function set")

    def test_state_persists_a_denial_reaches_the_model_and_the_retry_succeeds(self):
        model = ReplayChatCompletionClient(
            [
                # Task 1: generate, execute, reflect.
                block("rows = [3, 4, 5]\nprint('total', sum(rows))"),
                "The total is 12.",
                # Task 2: a denied block, the retry decision, a corrected block, the reflection.
                block("import subprocess\nprint(subprocess.run(['ls'], capture_output=True).stdout)"),
                json.dumps({"retry": True, "reason": "subprocess is denied; os.listdir is allowed"}),
                block("import os\nprint(sorted(os.listdir('.')), max(rows))"),
                "The largest row is 5.",
            ],
            model_info=MODEL_INFO,
        )

        async def scenario():
            async with WardenCodeExecutor(self.client) as executor:
                agent = CodeExecutorAgent("coder", model_client=model, code_executor=executor,
                                          max_retries_on_error=1)
                first = await agent.run(task="Sum the rows.")
                # The second task streamed, to see the agent's code-execution events.
                streamed = [item async for item in agent.run_stream(task="List the work dir and give the largest row.")]
                session = executor._session
                return first, streamed, executor.records, session

        first, streamed, records, session = asyncio.run(scenario())
        second = streamed[-1]
        self.assertEqual(first.messages[-1].content, "The total is 12.")
        self.assertEqual(second.messages[-1].content, "The largest row is 5.")
        calls = model.create_calls
        self.assertEqual(len(calls), 6)
        # The first block's output reached the reflection.
        self.assertIn("total 12", support.flatten(calls[1]["messages"][-1].content))
        # The denial reached the retry decision's prompt: rule, line, hint, nothing ran.
        denial = prompt_text(calls[3])
        self.assertIn("IMP101 (line 1, column 8)", denial)
        self.assertIn("module `subprocess` is denied by the policy", denial)
        self.assertIn("hint: use only allowed modules", denial)
        self.assertIn("Nothing of this code ran", denial)
        # ... and stays in the context of the corrected attempt.
        self.assertIn("IMP101", prompt_text(calls[4]))
        # The corrected block used `rows` from the first task: one session throughout.
        self.assertIn("[] 5", prompt_text(calls[5]))
        self.assertEqual([r.status for r in records], ["ok", "denied", "ok"])
        executions = [m.result.exit_code for m in streamed if isinstance(m, CodeExecutionEvent)]
        self.assertEqual(executions, [1, 0])
        # Leaving the executor's context ended the session.
        self.assertTrue(session.closed)

    def test_without_a_model_the_agent_executes_blocks_it_is_sent(self):
        async def scenario():
            async with WardenCodeExecutor(self.client) as executor:
                agent = CodeExecutorAgent("runner", code_executor=executor)
                ok = await agent.run(task=block("print(sum(range(10)))"))
                failed = await agent.run(task=block("values = {}\nvalues['missing']"))
                shell = await agent.run(task="```sh\nid\n```")
                return ok, failed, shell

        ok, failed, shell = asyncio.run(scenario())
        self.assertEqual(ok.messages[-1].content.strip(), "45")
        text = failed.messages[-1].content
        self.assertIn("exited with an error", text)
        self.assertIn("KeyError: 'missing'", text)
        self.assertIn("warden runs Python only", shell.messages[-1].content)

    def test_the_executor_is_an_autogen_component_without_its_token(self):
        executor = WardenCodeExecutor(self.client, policy="default", limits={"wall_time_ms": 5000})
        agent = CodeExecutorAgent("runner", code_executor=executor)
        dumped = agent.dump_component().model_dump_json()
        self.assertIn("warden_client.adapters.autogen.WardenCodeExecutor", dumped)
        self.assertNotIn(support.token(), dumped)
        loaded = CodeExecutorAgent.load_component(agent.dump_component())
        restored = loaded._code_executor
        self.assertIsInstance(restored, WardenCodeExecutor)
        self.assertEqual((restored.client.url, restored.policy, restored.limits),
                         (self.client.url, "default", {"wall_time_ms": 5000}))

    def test_figures_reach_the_model_as_images_and_a_denial_is_framed_as_a_denial(self):
        model = ReplayChatCompletionClient(
            [
                block(
                    "import pandas as pd\nimport matplotlib.pyplot as plt\n"
                    "display(pd.DataFrame({'region': ['north'], 'n': [31337]}))\n"
                    "plt.plot([1, 2, 3])\nplt.show()"
                ),
                "One figure.",
            ],
            model_info=VISION_MODEL_INFO,
        )

        async def scenario():
            async with WardenCodeExecutor(self.client) as executor:
                agent = WardenCodeExecutorAgent("coder", model_client=model, code_executor=executor)
                plotted = [item async for item in agent.run_stream(task="Plot it.")]
                runner = WardenCodeExecutorAgent("runner", code_executor=executor)
                denied = await runner.run(task=block("import subprocess"))
                return plotted, denied

        plotted, denied = asyncio.run(scenario())
        results = [m.result for m in plotted if isinstance(m, CodeExecutionEvent)]
        self.assertEqual(len(results), 1)
        self.assertIsInstance(results[0], WardenCodeResult)
        self.assertEqual(len(results[0].images), 1)
        self.assertIn("31337", results[0].output)
        self.assertIn("[image 1: PNG", results[0].output)
        # The reflection's prompt holds the figure as an image, and the text.
        reflection = model.create_calls[1]["messages"]
        pictures = [part for m in reflection if isinstance(m.content, list)
                    for part in m.content if isinstance(part, Image)]
        self.assertEqual(len(pictures), 1)
        self.assertIn("31337", prompt_text(model.create_calls[1]))
        # A denial reads as one: nothing ran, with the rule and the hint.
        text = denied.messages[-1].content
        self.assertNotIn("The script ran", text)
        self.assertIn("The code did not run", text)
        self.assertIn("IMP101", text)
        self.assertIn("hint:", text)

    def test_bounded_output_and_a_lost_session(self):
        async def scenario():
            async with WardenCodeExecutor(self.client) as executor:
                flood = await executor.execute_code_blocks(
                    [CodeBlock("w = 1\nfor i in range(200000):\n    print('row', i)", "python")],
                    CancellationToken(),
                )
                # The server loses the session between two blocks.
                self.client._json("DELETE", f"/v1/sessions/{executor._session.id}")
                lost = await executor.execute_code_blocks([CodeBlock("print(w)", "python")], CancellationToken())
                after = await executor.execute_code_blocks([CodeBlock("print(6 * 7)", "python")], CancellationToken())
                return flood, lost, after

        flood, lost, after = asyncio.run(scenario())
        # Past the policy's stdout cap: `output_limit`, the session kept, the text bounded.
        self.assertEqual(flood.exit_code, 1)
        self.assertLessEqual(len(flood.output), 20_000)
        self.assertIn("stdout size limit (1,048,576 bytes; `stdout_bytes`)", flood.output)
        self.assertTrue(flood.output.startswith("row 0\n"), flood.output[:80])
        self.assertIn("warden cut", flood.output)
        self.assertEqual((lost.exit_code, lost.ran), (1, False))
        self.assertIn("Your session was lost: its variables are gone.", lost.output)
        self.assertNotIn("NameError", lost.output)
        self.assertEqual((after.exit_code, after.output.strip()), (0, "42"))

    def test_one_shot_runs_and_cancellation(self):
        async def scenario():
            one_shot = WardenCodeExecutor(self.client, stateful=False)
            first = await one_shot.execute_code_blocks([CodeBlock("z = 1\nprint(z)", "python")], CancellationToken())
            second = await one_shot.execute_code_blocks([CodeBlock("print(z)", "python")], CancellationToken())
            stateful = WardenCodeExecutor(self.client)
            await stateful.execute_code_blocks([CodeBlock("w = 1", "python")], CancellationToken())
            session = stateful._session
            token = CancellationToken()
            task = asyncio.ensure_future(
                stateful.execute_code_blocks([CodeBlock("import time\ntime.sleep(20)", "python")], token)
            )
            await asyncio.sleep(1.0)
            token.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            return first, second, session

        first, second, session = asyncio.run(scenario())
        self.assertEqual((first.exit_code, first.output.strip()), (0, "1"))
        self.assertEqual(second.exit_code, 1)
        self.assertIn("NameError", second.output)
        # Cancelling ended the session (and the cell in it).
        self.assertTrue(session.closed)
        with self.assertRaises(errors.SessionGone):
            session.execute("w")


if __name__ == "__main__":
    unittest.main()
