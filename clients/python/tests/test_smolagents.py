"""smolagents' own `CodeAgent` loop, with a scripted model, running every step through warden."""

from __future__ import annotations

import unittest

from smolagents import CodeAgent, tool
from smolagents.models import ChatMessage, MessageRole, Model

from warden_client import errors
from warden_client.adapters.smolagents import UnsupportedTool, WardenExecutor, WardenStepError

from . import support


class ScriptedModel(Model):
    """Answers with the next scripted reply and keeps every prompt it was sent."""

    def __init__(self, replies):
        super().__init__(model_id="scripted")
        self.replies = list(replies)
        self.prompts = []

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
        self.prompts.append(list(messages))
        if not self.replies:
            raise AssertionError("the agent asked the model more often than scripted")
        reply = self.replies.pop(0)
        if callable(reply):
            reply = reply()  # something to do between two steps, then the reply
        return ChatMessage(role=MessageRole.ASSISTANT, content=reply)


def text_of(messages) -> str:
    return "\n".join(support.flatten(m.content) for m in messages)


def images_in(messages) -> list:
    """The image parts of the messages smolagents sent the model."""
    found = []
    for message in messages:
        if isinstance(message.content, list):
            found.extend(part for part in message.content if isinstance(part, dict) and part.get("type") == "image")
    return found


def step(code: str, thought: str = "Thought: next step.") -> str:
    return f"{thought}\n<code>\n{code}\n</code>"


@tool
def lookup_price(item: str) -> float:
    """Looks up the price of an item.

    Args:
        item: the item's name.
    """
    return {"apple": 0.5, "pear": 0.75}.get(item, 0.0)


class SmolagentsCodeAgent(unittest.TestCase):
    def setUp(self):
        self.client = support.tcp_client()

    def test_steps_share_a_session_a_denial_reaches_the_model_and_final_answer_returns(self):
        model = ScriptedModel(
            [
                step("x = 6 * 7\nprint('x is', x)"),
                step("import subprocess\nprint(subprocess.run(['id'], capture_output=True).stdout)"),
                step("final_answer({'answer': x, 'items': [1, 2]})"),
            ]
        )
        executor = WardenExecutor(self.client)
        allowed = executor.authorized_imports()
        self.assertIn("pandas", allowed)
        self.assertNotIn("subprocess", allowed)
        with CodeAgent(tools=[], model=model, executor=executor, additional_authorized_imports=allowed,
                       max_steps=5, verbosity_level=0) as agent:
            answer = agent.run("What is six times seven?")
            session = executor.session
            self.assertIsNotNone(session)
        self.assertEqual(answer, {"answer": 42, "items": [1, 2]})
        self.assertEqual(len(model.prompts), 3)
        # The system prompt lists the policy's modules as the ones the agent may import.
        self.assertIn("'pandas'", text_of(model.prompts[0][:1]))
        # The first step's output reached the second prompt.
        self.assertIn("x is 42", text_of(model.prompts[1][-1:]))
        # The denial reached the third: the rule, its line, the hint, and that nothing ran.
        denial = text_of(model.prompts[2][-1:])
        self.assertIn("IMP101 (line 1, column 8)", denial)
        self.assertIn("module `subprocess` is denied by the policy", denial)
        self.assertIn("hint: use only allowed modules", denial)
        self.assertIn("Nothing of this code ran", denial)
        self.assertNotIn("uid=", text_of(model.prompts[2]))
        # Every step ran in warden: set-up, the two steps that ran, and the denied one.
        statuses = [cell.status for cell in executor.cells]
        self.assertEqual(statuses, ["ok", "ok", "denied", "error"])
        self.assertEqual(executor.cells[-1].error["name"], "WardenFinalAnswer")
        # The agent's cleanup ended the session.
        self.assertTrue(session.closed)
        with self.assertRaises(errors.SessionGone):
            session.execute("x")

    def test_a_raising_step_sends_its_output_and_traceback(self):
        model = ScriptedModel(
            [
                step("values = [3, 0]\nprint('dividing')\nresult = values[0] / values[1]"),
                step("final_answer(values[0])"),
            ]
        )
        executor = WardenExecutor(self.client)
        with CodeAgent(tools=[], model=model, executor=executor, max_steps=4, verbosity_level=0) as agent:
            self.assertEqual(agent.run("Divide."), 3)
        feedback = text_of(model.prompts[1][-1:])
        self.assertIn("dividing", feedback)
        self.assertIn("Cell In[", feedback)
        self.assertIn("ZeroDivisionError: division by zero", feedback)

    def test_variables_reach_the_session(self):
        model = ScriptedModel([step("final_answer(sum(rows) * factor)")])
        executor = WardenExecutor(self.client)
        with CodeAgent(tools=[], model=model, executor=executor, max_steps=2, verbosity_level=0) as agent:
            self.assertEqual(agent.run("Sum the rows.", additional_args={"rows": [1, 2, 3], "factor": 2}), 12)
        with self.assertRaises(TypeError):
            executor.send_variables({"handle": object()})

    def test_final_answer_passes_except_exception_and_non_json_values_come_back_as_repr(self):
        model = ScriptedModel(
            [
                step("try:\n    final_answer({1, 2})\nexcept Exception:\n    print('swallowed')"),
            ]
        )
        executor = WardenExecutor(self.client)
        with CodeAgent(tools=[], model=model, executor=executor, max_steps=2, verbosity_level=0) as agent:
            self.assertEqual(agent.run("Give the set."), "{1, 2}")
        self.assertEqual(executor.cells[-1].stdout, "")

    def test_host_tools_are_refused_before_the_model_is_asked(self):
        model = ScriptedModel([step("final_answer(lookup_price('apple'))")])
        executor = WardenExecutor(self.client)
        with CodeAgent(tools=[lookup_price], model=model, executor=executor, max_steps=2, verbosity_level=0) as agent:
            with self.assertRaises(UnsupportedTool) as caught:
                agent.run("Price of an apple?")
        self.assertIn("lookup_price", str(caught.exception))
        self.assertEqual(model.prompts, [])

    def test_tools_sent_as_source_run_in_the_session(self):
        model = ScriptedModel([step("final_answer(lookup_price('apple') + lookup_price('pear'))")])
        executor = WardenExecutor(self.client, tools="source")
        with CodeAgent(tools=[lookup_price], model=model, executor=executor, max_steps=2, verbosity_level=0) as agent:
            self.assertEqual(agent.run("Price of an apple and a pear?"), 1.25)

    def test_output_is_bounded_figures_are_observation_images_and_a_lost_session_is_said(self):
        executor = WardenExecutor(self.client)
        holder = {}

        def lose_the_session():
            # The server loses the session between two steps (as after a restart or an expiry).
            holder["lost"] = executor.session.id
            self.client._json("DELETE", f"/v1/sessions/{executor.session.id}")
            return step("print(x)")

        model = ScriptedModel(
            [
                step("x = 1\nfor i in range(200000):\n    print('row', i)"),
                step(
                    "import pandas as pd\nimport matplotlib.pyplot as plt\n"
                    "display(pd.DataFrame({'region': ['north'], 'n': [31337]}))\n"
                    "plt.plot([1, 2, 3])\nplt.show()"
                ),
                lose_the_session,
                lambda: holder.update(new=executor.session.id) or step("final_answer('done')"),
            ]
        )
        with CodeAgent(tools=[], model=model, executor=executor, max_steps=6, verbosity_level=0,
                       step_callbacks=[executor.attach_images]) as agent:
            self.assertEqual(agent.run("Print rows, plot, go on."), "done")
        # The flood reached the model bounded, its head and tail kept, the cut said.
        flood = text_of(model.prompts[1][-1:])
        self.assertLess(len(flood), 21_000)
        self.assertIn("row 0\n", flood)
        self.assertIn("warden cut", flood)
        self.assertIn("print less at a time", flood)
        # display() output and the figure: named in the text, the PNG an observation image.
        shown = model.prompts[2]
        self.assertIn("31337", text_of(shown[-1:]))
        self.assertIn("[image 1: PNG", text_of(shown[-1:]))
        self.assertEqual(len(images_in(shown)), 1, shown[-1])
        # The lost session: said plainly, a new one started (final_answer works in it).
        lost = text_of(model.prompts[3][-1:])
        self.assertIn("Your session was lost: its variables are gone.", lost)
        self.assertNotIn("NameError", lost)
        self.assertNotEqual(holder["new"], holder["lost"])
        self.assertEqual(executor.cells[-1].error["name"], "WardenFinalAnswer")

    def test_a_cell_the_policy_sends_to_review_says_how_to_go_on(self):
        executor = WardenExecutor(self.client, policy="review")
        try:
            executor.send_tools({})
            with self.assertRaises(WardenStepError) as caught:
                executor("names = sorted(globals())\nprint(len(names))")
            cell = caught.exception.cell
            # A session takes no approvals: the cell is refused, and the text says how to go on.
            self.assertEqual((cell.status, cell.decision), ("denied", "review"), cell.raw)
            text = str(caught.exception)
            self.assertIn("requires a person to review it", text)
            self.assertIn("warden review approve", text)
            self.assertIn("DYN403", text)
            self.assertIn("the session kept its state", text)
        finally:
            executor.cleanup()

    def test_a_step_error_carries_its_cell(self):
        executor = WardenExecutor(self.client)
        try:
            executor.send_tools({})
            with self.assertRaises(WardenStepError) as caught:
                executor("import socket")
            self.assertEqual(caught.exception.cell.status, "denied")
            self.assertEqual(executor("1 + 1").output, "2")
        finally:
            executor.cleanup()


if __name__ == "__main__":
    unittest.main()
