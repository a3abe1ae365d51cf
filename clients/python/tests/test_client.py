"""The client against a real `warden serve`: both listeners, runs, checks, sessions and their files,
typed errors, Retry-After and timeouts. The server (tests/serve/adapters.rs) has one run slot and a
queue of one, and allows one session at a time, idle for 4 s at most, so every test ends its
session."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import unittest

import warden_client
from warden_client import errors

from . import support


class Listeners(unittest.TestCase):
    def test_unix_socket_without_a_token(self):
        client = support.unix_client()
        self.assertEqual(client.health()["status"], "ok")
        self.assertEqual(client.policies()["default"], "default")

    def test_tcp_needs_its_token(self):
        client = support.tcp_client()
        names = [p["name"] for p in client.policies()["policies"]]
        self.assertIn("default", names)
        with self.assertRaises(errors.Unauthorized) as caught:
            warden_client.Client(support.tcp_url(), token="").policies()
        self.assertEqual(caught.exception.status, 401)
        with self.assertRaises(errors.Unauthorized):
            warden_client.Client(support.tcp_url(), token="not-a-token").run("print(1)")

    def test_the_address_and_token_come_from_the_environment(self):
        saved = {k: os.environ.get(k) for k in ("WARDEN_URL", "WARDEN_TOKEN")}
        try:
            os.environ["WARDEN_URL"] = support.tcp_url()
            os.environ["WARDEN_TOKEN"] = support.token()
            client = warden_client.Client()
            self.assertEqual(client.url, support.tcp_url())
            self.assertEqual(client.run("print('env')").stdout, "env\n")
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def test_no_server_is_a_connection_error(self):
        client = warden_client.Client("unix:/nonexistent/warden.sock")
        with self.assertRaises(errors.WardenConnectionError):
            client.health()
        self.assertEqual(client.retried, client.max_retries)

    def test_a_connection_error_is_retried_until_the_server_is_there(self):
        directory = tempfile.mkdtemp(prefix="warden-client-test-")
        path = os.path.join(directory, "warden.sock")
        # The socket appears 0.3 s after the first attempt; the client's retries find it.
        timer = threading.Timer(0.3, os.symlink, (support.socket_path(), path))
        try:
            timer.start()
            client = warden_client.Client("unix:" + path)
            self.assertEqual(client.health()["status"], "ok")
            self.assertGreaterEqual(client.retried, 1)
            once = warden_client.Client("unix:" + path + ".absent", max_retries=0)
            with self.assertRaises(errors.WardenConnectionError):
                once.health()
            self.assertEqual(once.retried, 0)
        finally:
            timer.cancel()
            timer.join()
            shutil.rmtree(directory)

    def test_a_bad_address_is_refused_at_once(self):
        with self.assertRaises(ValueError):
            warden_client.Client("ftp://example")


class Runs(unittest.TestCase):
    def setUp(self):
        self.client = support.tcp_client()

    def test_a_run_with_inputs_and_files(self):
        code = (
            "import csv\n"
            "rows = list(csv.DictReader(open('data/sales.csv')))\n"
            "total = sum(int(r['n']) for r in rows)\n"
            "open('total.txt', 'w').write(str(total))\n"
            "print('total', total)\n"
        )
        record = self.client.run(code, inputs={"data/sales.csv": "region,n\nnorth,3\nsouth,4\n"})
        self.assertTrue(record.ok, record.raw)
        self.assertEqual(record.stdout, "total 7\n")
        self.assertEqual(record.exit_code, 0)
        self.assertEqual(record.files.get("total.txt"), b"7")
        self.assertEqual(record.text_for_model(), "total 7")

    def test_a_denied_run_is_a_record_with_findings_and_hints(self):
        record = self.client.run("import subprocess\nsubprocess.run(['id'])\n")
        self.assertTrue(record.denied)
        self.assertEqual(record.status, "denied")
        rules = [f.rule for f in record.findings]
        self.assertIn("IMP101", rules)
        finding = record.findings[0]
        self.assertEqual(finding.line, 1)
        self.assertTrue(finding.hint)
        text = record.text_for_model()
        self.assertIn("IMP101 (line 1", text)
        self.assertIn("hint:", text)
        self.assertIn("subprocess", text)

    def test_a_raising_run_gives_its_traceback(self):
        record = self.client.run("print('before')\nraise ValueError('bad value')\n")
        self.assertEqual(record.status, "error")
        self.assertEqual(record.error["name"], "ValueError")
        text = record.text_for_model()
        self.assertIn("before", text)
        self.assertIn("ValueError: bad value", text)

    def test_limits_tighten_and_a_timeout_is_a_record(self):
        record = self.client.run("import time\ntime.sleep(5)\n", limits={"wall_time_ms": 500})
        self.assertEqual(record.status, "timeout", record.raw)
        self.assertFalse(record.ok)

    def test_check_without_running(self):
        verdict = self.client.check("import socket\n")
        self.assertEqual(verdict["decision"], "deny")
        self.assertEqual(self.client.check("print(1)\n")["decision"], "allow")

    def test_unknown_policy_and_forbidden_policy(self):
        # On the socket without a token every policy is usable: an unknown name is a bad request.
        with self.assertRaises(errors.BadRequest) as caught:
            support.unix_client().run("print(1)", policy="no-such-policy")
        self.assertEqual(caught.exception.code, "bad_request")
        # A token gets the same 403 for a policy outside its list, whether or not it exists.
        for name in ("strict", "no-such-policy"):
            with self.assertRaises(errors.Forbidden) as caught:
                self.client.run("print(1)", policy=name)
            self.assertEqual(caught.exception.status, 403)
        strict = warden_client.Client(support.tcp_url(), token=support.strict_token())
        self.assertEqual(strict.run("print(2)").stdout, "2\n")
        self.assertEqual(strict.policy()["name"], "strict")

    def test_a_full_queue_answers_429_and_the_client_retries_after_it(self):
        # The server has one run slot and a queue of one: a run holds the slot, a second waits in
        # the queue, and a third is refused at once with Retry-After.
        results = {}
        metrics = support.unix_client()

        def run(name, code):
            results[name] = support.tcp_client(max_retries=0).run(code)

        def wait_for(condition, what):
            deadline = time.monotonic() + 20
            while not condition():
                self.assertLess(time.monotonic(), deadline, f"timed out waiting for {what}")
                time.sleep(0.05)

        holder = threading.Thread(target=run, args=("holder", "import time\ntime.sleep(4)\nprint('held')"))
        holder.start()
        wait_for(lambda: metrics.health()["running"] == 1, "the first run to hold the slot")
        queued = threading.Thread(target=run, args=("queued", "print('queued')"))
        queued.start()
        wait_for(lambda: "warden_queue_depth 1" in metrics._call("GET", "/metrics").decode(), "a queued run")
        try:
            with self.assertRaises(errors.QueueFull) as caught:
                support.tcp_client(max_retries=0).run("print('refused')")
            self.assertEqual(caught.exception.status, 429)
            self.assertEqual(caught.exception.code, "queue_full")
            self.assertIsNotNone(caught.exception.retry_after)
            patient = support.tcp_client(max_retries=20, max_retry_wait=60)
            record = patient.run("print('retried')")
            self.assertEqual(record.stdout, "retried\n")
            self.assertGreaterEqual(patient.retried, 1)
        finally:
            holder.join()
            queued.join()
        self.assertEqual(results["holder"].stdout, "held\n")
        self.assertEqual(results["queued"].stdout, "queued\n")

    def test_the_client_timeout_raises_a_typed_error(self):
        impatient = support.tcp_client(timeout=0.5)
        started = time.monotonic()
        with self.assertRaises(errors.WardenTimeout):
            impatient.run("import time\ntime.sleep(3)\n")
        self.assertLess(time.monotonic() - started, 2.5)


class Sessions(unittest.TestCase):
    def setUp(self):
        self.client = support.tcp_client()

    def test_state_files_streaming_and_end(self):
        with self.client.session(inputs={"in/a.txt": b"alpha"}) as session:
            self.assertEqual(session.policy, "default")
            first = session.execute("x = 41\nprint('set')")
            self.assertTrue(first.ok, first.raw)
            self.assertEqual(first.stdout, "set\n")
            second = session.execute("x + 1")
            self.assertEqual(second.result_text, "42")
            self.assertEqual(second.execution_count, 2)
            self.assertIn("Out[2]: 42", second.text_for_model())

            denied = session.execute("import socket")
            self.assertTrue(denied.denied)
            self.assertTrue(denied.session_alive)
            self.assertIn("the session kept its state", denied.text_for_model())
            self.assertEqual(session.execute("x").result_text, "41")

            chunks = []
            streamed = session.execute(
                "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.2)\n",
                on_output=lambda name, text: chunks.append((name, text)),
            )
            self.assertTrue(streamed.ok, streamed.raw)
            self.assertEqual("".join(t for _, t in chunks), streamed.stdout)
            self.assertGreaterEqual(len(chunks), 3)

            self.assertEqual(session.upload("out/b.bin", b"\x00\x01\x02")["size"], 3)
            paths = {f["path"] for f in session.files()}
            self.assertEqual(paths, {"in/a.txt", "out/b.bin"})
            self.assertEqual(session.download("in/a.txt"), b"alpha")
            self.assertEqual(session.execute("open('out/b.bin', 'rb').read()").result_text, "b'\\x00\\x01\\x02'")
            with self.assertRaises(errors.NotFound) as caught:
                session.download("missing.txt")
            self.assertNotIsInstance(caught.exception, errors.SessionGone)
            with self.assertRaises(errors.BadRequest):
                session.upload("../escape.txt", b"no")
            self.assertIn(session.id, [s["id"] for s in self.client.sessions()])
        self.assertTrue(session.closed)
        with self.assertRaises(errors.SessionGone):
            session.execute("x")
        self.assertIsNone(session.close())

    def test_an_error_keeps_the_session(self):
        with self.client.session() as session:
            cell = session.execute("y = 2\n1 / 0")
            self.assertEqual(cell.status, "error")
            self.assertEqual(cell.error["name"], "ZeroDivisionError")
            self.assertIn("ZeroDivisionError", cell.text_for_model())
            self.assertEqual(session.execute("y").result_text, "2")

    def test_another_clients_session_is_not_found(self):
        with self.client.session() as session:
            other = support.unix_client()
            with self.assertRaises(errors.NotFound):
                other._json("POST", f"/v1/sessions/{session.id}/execute", {"code": "1"})

    def test_a_lost_session_raises_session_gone_with_the_servers_message(self):
        # The server runs as a node (WARDEN_NODE): its ids name the node and its boot epoch.
        node = self.client.health()["node"]
        self.assertEqual(node, "client-test-node")
        with self.client.session() as session:
            head, named = session.id.split(".", 1)
            hex_part, epoch = head.split("-")
            self.assertEqual(named, node)
            # The same node's id from an earlier life of its server: what a restarted server
            # answers for the sessions it lost (410 session_lost).
            lost = warden_client.Session(self.client, {"id": f"{hex_part}-{int(epoch) - 1}.{node}"})
            with self.assertRaises(errors.SessionGone) as caught:
                lost.execute("x = 1")
            gone = caught.exception
            self.assertEqual((gone.status, gone.code, gone.state_lost), (410, "session_lost", True))
            self.assertIn("restarted", gone.message)
            self.assertIn("start a new session", gone.message)
            self.assertIn(lost.id, gone.message)
            self.assertTrue(lost.closed)
            self.assertIsNone(lost.close())
            self.assertEqual(session.execute("6 * 7").result_text, "42")
        # A session that ended is gone too, but the server no longer knows it: 404, not lost.
        with self.assertRaises(errors.SessionGone) as caught:
            session.execute("1")
        self.assertEqual((caught.exception.status, caught.exception.state_lost), (404, False))

    def test_a_session_of_another_node_is_wrong_node(self):
        other = warden_client.Session(self.client, {"id": "0" * 32 + "-1.elsewhere-7"})
        with self.assertRaises(errors.WrongNode) as caught:
            other.describe()
        self.assertEqual((caught.exception.status, caught.exception.code), (421, "wrong_node"))
        self.assertEqual(caught.exception.node, "elsewhere-7")
        self.assertIn("elsewhere-7", caught.exception.message)

    def test_retry_after_is_honoured_on_the_session_cap(self):
        # The server holds one session at most, and ends it after 4 s without a request.
        holder = self.client.session()
        try:
            no_retry = support.tcp_client(max_retries=0)
            with self.assertRaises(errors.SessionLimit) as caught:
                no_retry.session()
            self.assertEqual(caught.exception.status, 429)
            self.assertEqual(caught.exception.code, "session_limit")
            self.assertIsNotNone(caught.exception.retry_after)
            self.assertGreaterEqual(caught.exception.retry_after, 1)
            # A wait budget below what the server asks: raised at once, without sleeping.
            started = time.monotonic()
            with self.assertRaises(errors.SessionLimit):
                support.tcp_client(max_retries=3, max_retry_wait=0.5).session()
            self.assertLess(time.monotonic() - started, 0.5)
            # Retrying: the holder expires while the client waits, and the session is made.
            patient = support.tcp_client(max_retries=10, max_retry_wait=30)
            with patient.session() as session:
                self.assertGreaterEqual(patient.retried, 1)
                self.assertTrue(session.execute("1").ok)
            with self.assertRaises(errors.SessionGone):
                holder.execute("1")
        finally:
            holder.close()


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class ModelText(unittest.TestCase):
    """`text_for_model()` / `for_model()`: bounded, complete and actionable, from real records."""

    def setUp(self):
        self.client = support.tcp_client()

    def test_output_is_bounded_keeping_head_and_tail_and_saying_what_was_cut(self):
        record = self.client.run("for i in range(200000):\n    print('row', i)\n")
        self.assertGreater(len(record.stdout), 1_000_000)
        text = record.text_for_model()
        self.assertLessEqual(len(text), warden_client.DEFAULT_TEXT_BUDGET)
        self.assertTrue(text.startswith("row 0\nrow 1\n"), text[:100])
        self.assertIn("warden cut", text)
        self.assertIn("characters of stdout", text)
        self.assertIn("print less at a time", text)
        # The tail is kept: the last whole line the record holds is shown.
        last = record.stdout.rstrip("\n").rsplit("\n", 1)[-1]
        self.assertIn(last, text)
        # The budget is the caller's to set.
        small = record.for_model(budget=3000)
        self.assertLessEqual(len(small.text), 3000)
        self.assertGreater(small.cut, len(record.stdout) - 3000)

    def test_a_traceback_is_shown_once_after_the_output_naming_main_py(self):
        record = self.client.run("print('before')\ndef f():\n    raise ValueError('bad value')\nf()\n")
        text = record.text_for_model()
        self.assertEqual(text.count("Traceback (most recent call last)"), 1, text)
        self.assertEqual(text.count("ValueError: bad value"), 1, text)
        self.assertTrue(text.startswith("before\n"), text)
        # It names the program's file as the model knows it, not the jail's path for it.
        self.assertIn('File "main.py", line 3, in f', text)
        self.assertNotIn("/run/warden", text)

    def test_schema_errors_name_the_instance_path_and_the_requirement(self):
        schema = {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}
        record = self.client.run("import json\nprint(json.dumps({'n': 3}))\n", schema=schema)
        self.assertEqual(record.status, "output_invalid", record.raw)
        text = record.text_for_model()
        self.assertIn("at `/n` (instance path)", text)
        self.assertIn("/properties/n/type", text)
        self.assertIn("is not of type", text)

    def test_the_limit_hit_is_named_with_its_value(self):
        record = self.client.run("import time\ntime.sleep(10)\n", limits={"wall_time_ms": 700})
        self.assertEqual(record.status, "timeout", record.raw)
        self.assertIn("wall time limit (700 ms; `wall_time_ms`)", record.text_for_model())

    def test_displays_values_and_figures_reach_the_model(self):
        code = (
            "import pandas as pd\n"
            "import matplotlib.pyplot as plt\n"
            "display(pd.DataFrame({'region': ['north'], 'n': [31337]}))\n"
            "plt.plot([1, 2, 3])\n"
            "plt.show()\n"
            "6 * 7\n"
        )
        with self.client.session() as session:
            cell = session.execute(code)
            self.assertTrue(cell.ok, cell.raw)
            view = cell.for_model()
        self.assertIn("31337", view.text)
        self.assertIn("north", view.text)
        self.assertIn("Out[1]: 42", view.text)
        self.assertEqual(len(view.images), 1, view)
        self.assertTrue(view.images[0].data.startswith(PNG_MAGIC))
        self.assertRegex(view.text, r"\[image 1: PNG \d+x\d+ from display 2, attached\]")

    def test_a_session_that_ended_says_its_variables_are_gone(self):
        with self.client.session(limits={"memory_mib": 256}) as session:
            session.execute("x = 1")
            cell = session.execute("blocks = [bytearray(32 << 20) for _ in range(16)]")
        self.assertEqual(cell.status, "memory_limit", cell.raw)
        text = cell.text_for_model()
        self.assertIn("Your session was lost: its variables are gone.", text)
        self.assertIn("memory limit (256 MiB; `memory_mib`)", text)

    def test_a_review_says_its_id_and_how_approval_works_and_the_client_drives_it(self):
        code = "names = sorted(globals())\nprint('reviewed', len(names) > 0)\n"
        record = self.client.run(code, policy="review")
        self.assertEqual(record.status, "review_required", record.raw)
        review_id = record.review["id"]
        text = record.text_for_model()
        self.assertIn(f"held for review as `{review_id}`", text)
        self.assertIn(f"warden review approve {review_id}", text)
        self.assertIn("DYN403", text)
        self.assertIn(review_id, [r["id"] for r in self.client.reviews()])
        self.assertEqual(self.client.review(review_id)["status"], "pending")
        with self.assertRaises(errors.WardenError) as caught:
            self.client.run_review(review_id)
        self.assertEqual((caught.exception.status, caught.exception.code), (409, "review_pending"))
        with self.assertRaises(errors.Forbidden):
            self.client.approve_review(review_id)
        approver = warden_client.Client(support.tcp_url(), token=support.approver_token())
        self.assertEqual(approver.approve_review(review_id, reason="fine")["status"], "approved")
        ran = self.client.run_review(review_id)
        self.assertTrue(ran.ok, ran.raw)
        self.assertEqual(ran.stdout, "reviewed True\n")
        rejected = self.client.run(code, policy="review")
        self.assertEqual(approver.reject_review(rejected.review["id"], reason="no")["status"], "rejected")

    def test_sessions_are_listed_and_described(self):
        with self.client.session() as session:
            listed = [s["id"] for s in self.client.sessions()]
            self.assertIn(session.id, listed)
            self.assertEqual(self.client.session_info(session.id)["id"], session.id)
        with self.assertRaises(errors.NotFound):
            self.client.session_info(session.id)


class Errors(unittest.TestCase):
    def test_mapping(self):
        self.assertIsInstance(errors.error_for(429, "queue_full", "m", 2.0), errors.QueueFull)
        self.assertIsInstance(errors.error_for(503, "queue_timeout", "m", 1.0), errors.Unavailable)
        self.assertIsInstance(errors.error_for(503, "shutting_down", "m", 1.0), errors.Overloaded)
        self.assertIsInstance(errors.error_for(413, "too_large", "m", None), errors.TooLarge)
        self.assertIsInstance(errors.error_for(408, None, "m", None), errors.RequestTimeout)
        self.assertIsInstance(errors.error_for(500, "internal", "m", None), errors.ServerError)
        self.assertIsInstance(errors.error_for(405, "method_not_allowed", "m", None), errors.ServerError)
        lost = errors.error_for(410, "session_lost", "session s was lost", None)
        self.assertIsInstance(lost, errors.SessionGone)
        self.assertIsInstance(lost, errors.NotFound)
        self.assertEqual((lost.message, lost.state_lost), ("session s was lost", True))
        # A router's 410 without warden's body is still a lost session.
        self.assertTrue(errors.error_for(410, None, "Gone", None).state_lost)
        self.assertNotIsInstance(errors.error_for(404, "not_found", "m", None), errors.SessionGone)
        wrong = errors.error_for(421, "wrong_node", "m", None, "n2")
        self.assertIsInstance(wrong, errors.WrongNode)
        self.assertEqual(wrong.node, "n2")


if __name__ == "__main__":
    unittest.main()
