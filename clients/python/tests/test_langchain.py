"""LangChain's own agent loop (`langchain.agents.create_agent`, a LangGraph graph) with a scripted
chat model, calling `WardenPythonTool`."""

from __future__ import annotations

import base64
import unittest
from typing import Any, List

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage

from warden_client import errors
from warden_client.adapters.langchain import WardenPythonTool

from . import support


class ScriptedChatModel(GenericFakeChatModel):
    """GenericFakeChatModel that accepts tools (a real model would see their schemas) and keeps
    every list of messages it was sent."""

    received: List[Any] = []
    bound_tools: List[Any] = []

    def bind_tools(self, tools, **kwargs):
        self.bound_tools = list(tools)
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.received.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def call(code: str, n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "run_python", "args": {"code": code}, "id": f"call_{n}"}])


class LangchainAgent(unittest.TestCase):
    def setUp(self):
        self.client = support.tcp_client()

    def test_calls_share_a_session_and_a_denial_reaches_the_model_as_a_tool_error(self):
        model = ScriptedChatModel(
            messages=iter(
                [
                    call("x = 6 * 7\nprint('x is', x)", 1),
                    call("import subprocess\nsubprocess.run(['id'])", 2),
                    call("x + 1", 3),
                    AIMessage(content="x is 42, and x + 1 is 43."),
                ]
            ),
            received=[],
        )
        tool = WardenPythonTool(client=self.client)
        self.assertIn("Modules you may import:", tool.description)
        self.assertIn("pandas", tool.description)
        try:
            agent = create_agent(model, tools=[tool])
            state = agent.invoke({"messages": [("user", "Compute x = 6 * 7, then x + 1.")]})
        finally:
            tool.close()
        self.assertEqual(state["messages"][-1].content, "x is 42, and x + 1 is 43.")
        self.assertEqual([t.name for t in model.bound_tools], ["run_python"])
        self.assertEqual(len(model.received), 4)
        ok = model.received[1][-1]
        self.assertIsInstance(ok, ToolMessage)
        self.assertEqual(ok.status, "success")
        self.assertEqual(ok.content, "x is 42")
        denied = model.received[2][-1]
        self.assertIsInstance(denied, ToolMessage)
        self.assertEqual(denied.status, "error")
        self.assertEqual(denied.tool_call_id, "call_2")
        self.assertIn("IMP101 (line 1, column 8)", denied.content)
        self.assertIn("module `subprocess` is denied by the policy", denied.content)
        self.assertIn("hint: use only allowed modules", denied.content)
        self.assertIn("the session kept its state", denied.content)
        after = model.received[3][-1]
        self.assertEqual((after.status, after.content), ("success", "Out[2]: 43"))
        self.assertEqual([r.status for r in tool.records], ["ok", "denied", "ok"])

    def test_a_raising_call_returns_its_traceback_and_one_shot_runs_keep_no_state(self):
        tool = WardenPythonTool(client=self.client, stateful=False, describe_policy=False)
        self.assertNotIn("Modules you may import", tool.description)
        message = tool.invoke({"type": "tool_call", "name": "run_python", "id": "c1",
                               "args": {"code": "data = {'a': 1}\nprint(data['b'])"}})
        self.assertIsInstance(message, ToolMessage)
        self.assertEqual(message.status, "error")
        self.assertIn("KeyError: 'b'", message.content)
        again = tool.invoke({"type": "tool_call", "name": "run_python", "id": "c2", "args": {"code": "print(data)"}})
        self.assertEqual(again.status, "error")
        self.assertIn("NameError", again.content)
        self.assertEqual(tool.invoke({"code": "print(1 + 1)"}), "2")

    def test_bounded_text_figures_as_content_blocks_and_a_lost_session_said(self):
        model = ScriptedChatModel(
            messages=iter(
                [
                    call("x = 1\nfor i in range(200000):\n    print('row', i)", 1),
                    call(
                        "import pandas as pd\nimport matplotlib.pyplot as plt\n"
                        "display(pd.DataFrame({'region': ['north'], 'n': [31337]}))\n"
                        "plt.plot([1, 2, 3])\nplt.show()",
                        2,
                    ),
                    AIMessage(content="Printed and plotted."),
                ]
            ),
            received=[],
        )
        tool = WardenPythonTool(client=self.client, describe_policy=False)
        try:
            agent = create_agent(model, tools=[tool])
            agent.invoke({"messages": [("user", "Print rows, then plot.")]})
            # Past the policy's stdout cap the cell is `output_limit` (a tool error), its text bounded.
            flood = model.received[1][-1]
            self.assertIsInstance(flood, ToolMessage)
            self.assertEqual(flood.status, "error")
            self.assertLessEqual(len(flood.content), 20_000)
            self.assertIn("stdout size limit (1,048,576 bytes; `stdout_bytes`)", flood.content)
            self.assertTrue(flood.content.startswith("row 0\n"), flood.content[:80])
            self.assertIn("warden cut", flood.content)
            # The figure reaches the model as an image content block after the text.
            shown = model.received[2][-1]
            self.assertIsInstance(shown.content, list)
            text = shown.content[0]["text"]
            self.assertIn("31337", text)
            self.assertIn("[image 1: PNG", text)
            image = shown.content[1]
            self.assertEqual((image["type"], image["mime_type"]), ("image", "image/png"))
            self.assertTrue(base64.b64decode(image["base64"]).startswith(b"\x89PNG\r\n\x1a\n"))
            # The server loses the session: the model reads that its variables are gone, and the
            # next call runs in a new session.
            self.client._json("DELETE", f"/v1/sessions/{tool._session.id}")
            lost = tool.invoke({"type": "tool_call", "name": "run_python", "id": "c3", "args": {"code": "print(x)"}})
            self.assertEqual(lost.status, "error")
            self.assertIn("Your session was lost: its variables are gone.", lost.content)
            self.assertNotIn("NameError", lost.content)
            self.assertEqual(tool.invoke({"code": "y = 2\ny * 21"}), "Out[1]: 42")
        finally:
            tool.close()

    def test_a_denial_and_a_limit_are_tool_errors_that_say_what_to_change(self):
        tool = WardenPythonTool(client=self.client, describe_policy=False, limits={"wall_time_ms": 700})
        try:
            denied = tool.invoke({"type": "tool_call", "name": "run_python", "id": "c1",
                                  "args": {"code": "import subprocess"}})
            self.assertEqual(denied.status, "error")
            self.assertTrue(denied.content.startswith("warden did not run this code"), denied.content)
            self.assertIn("hint:", denied.content)
            slow = tool.invoke({"type": "tool_call", "name": "run_python", "id": "c2",
                                "args": {"code": "import time\ntime.sleep(5)"}})
            self.assertEqual(slow.status, "error")
            self.assertIn("wall time limit (700 ms; `wall_time_ms`)", slow.content)
        finally:
            tool.close()

    def test_an_unreachable_server_is_a_tool_error_not_a_crash(self):
        from warden_client import Client

        tool = WardenPythonTool(client=Client("unix:/nonexistent/warden.sock"))
        message = tool.invoke({"type": "tool_call", "name": "run_python", "id": "c1", "args": {"code": "1"}})
        self.assertEqual(message.status, "error")
        self.assertIn("warden could not run the code", message.content)
        with self.assertRaises(errors.WardenConnectionError):
            tool.client.health()


if __name__ == "__main__":
    unittest.main()
