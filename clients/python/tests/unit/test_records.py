"""Records and errors: the views over the server's JSON, and the exception each error answer
becomes; no server needed."""

from __future__ import annotations

import base64
import unittest

from warden_client import (
    BadRequest,
    CellResult,
    Forbidden,
    NotFound,
    Overloaded,
    QueueFull,
    RunResult,
    ServerError,
    SessionGone,
    SessionLimit,
    Unavailable,
    WardenError,
)
from warden_client.errors import RequestTimeout, TooLarge, WrongNode, error_for


class Records(unittest.TestCase):
    def test_a_run_record_s_fields(self) -> None:
        record = RunResult(
            {
                "status": "ok",
                "exit_code": 0,
                "stdout": "hi\n",
                "stderr": None,
                "check": {"decision": "allow", "findings": []},
                "files": [
                    {"path": "out/a.txt", "content_base64": base64.b64encode(b"A").decode()},
                    {"path": "big.bin", "bytes": 10},
                ],
                "limits_hit": [],
            }
        )
        self.assertTrue(record.ok)
        self.assertFalse(record.denied)
        self.assertEqual((record.exit_code, record.stdout, record.stderr), (0, "hi\n", ""))
        self.assertEqual(record.decision, "allow")
        self.assertEqual(record.files, {"out/a.txt": b"A"})
        self.assertEqual(record["status"], "ok")
        self.assertIsNone(record.get("missing"))
        self.assertEqual(repr(record), "RunResult(status='ok')")

    def test_findings_describe_themselves(self) -> None:
        record = RunResult(
            {
                "status": "denied",
                "check": {
                    "decision": "deny",
                    "findings": [{"rule": "IMP101", "message": "no", "hint": "h", "span": {"line": 2, "column": 1}}],
                },
            }
        )
        self.assertTrue(record.denied)
        [finding] = record.findings
        self.assertEqual((finding.rule, finding.line, finding.column), ("IMP101", 2, 1))
        self.assertEqual(finding.describe(), "IMP101 (line 2, column 1): no\n  hint: h")

    def test_a_cell_record_s_fields(self) -> None:
        cell = CellResult(
            {"status": "ok", "execution_count": 4, "result": {"text/plain": "7"}, "session_alive": True}
        )
        self.assertEqual((cell.execution_count, cell.result_text, cell.session_alive), (4, "7", True))
        self.assertEqual(cell.text_for_model(), "Out[4]: 7")
        self.assertIsNone(CellResult({"status": "ok"}).result_text)

    def test_a_review_required_record_is_denied_and_names_its_review(self) -> None:
        record = RunResult({"status": "review_required", "review": {"id": "r-9"}})
        self.assertTrue(record.denied)
        self.assertEqual(record.review, {"id": "r-9"})


class Errors(unittest.TestCase):
    def test_the_code_chooses_the_exception_before_the_status(self) -> None:
        cases = [
            (429, "queue_full", QueueFull),
            (429, "session_limit", SessionLimit),
            (503, "queue_timeout", Unavailable),
            (503, "shutting_down", Unavailable),
            (429, None, Overloaded),
            (400, "bad_request", BadRequest),
            (403, "forbidden", Forbidden),
            (404, "not_found", NotFound),
            (408, None, RequestTimeout),
            (413, "too_large", TooLarge),
            (500, "internal", ServerError),
            (418, None, ServerError),
        ]
        for status, code, cls in cases:
            with self.subTest(status=status, code=code):
                error = error_for(status, code, "m", None)
                self.assertIs(type(error), cls)
                self.assertEqual((error.status, error.code, error.message), (status, code, "m"))

    def test_a_404_is_not_found_whatever_its_code_says(self) -> None:
        self.assertIs(type(error_for(404, "queue_full", "m", None)), NotFound)

    def test_a_lost_session_says_whether_its_state_was_lost(self) -> None:
        lost = error_for(410, "session_lost", "node restarted", None)
        self.assertIsInstance(lost, SessionGone)
        self.assertIsInstance(lost, NotFound)
        assert isinstance(lost, SessionGone)
        self.assertTrue(lost.state_lost)

    def test_a_wrong_node_names_the_node(self) -> None:
        error = error_for(421, "wrong_node", "elsewhere", None, "node-b")
        assert isinstance(error, WrongNode)
        self.assertEqual(error.node, "node-b")

    def test_an_error_reads_as_status_code_and_message(self) -> None:
        self.assertEqual(str(error_for(429, "queue_full", "busy", 2.0)), "429 queue_full: busy")
        self.assertEqual(error_for(429, "queue_full", "busy", 2.0).retry_after, 2.0)
        self.assertEqual(str(WardenError("plain")), "plain")


if __name__ == "__main__":
    unittest.main()
