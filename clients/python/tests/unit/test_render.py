"""`render()`: what a model reads about a record (bounded text, images apart), with records as the
server writes them (docs/serve.md); no server needed."""

from __future__ import annotations

import base64
import struct
import unittest
import zlib
from typing import Any, Dict

from warden_client import DEFAULT_TEXT_BUDGET, render
from warden_client.render import MIN_TEXT_BUDGET, SESSION_LOST_TEXT, Image, images_of


def png(width: int, height: int) -> bytes:
    """A valid PNG header (what `Image.size` reads) and a minimal body."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(header)) + chunk + struct.pack(">I", zlib.crc32(chunk))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class Succeeded(unittest.TestCase):
    def test_output_and_the_value_are_the_text(self) -> None:
        out = render(
            {"status": "ok", "stdout": "hello\n", "result": {"text/plain": "42"}, "execution_count": 3},
            cell=True,
        )
        self.assertTrue(out.ok)
        self.assertEqual(out.text, "hello\nOut[3]: 42")
        self.assertEqual((out.images, out.cut), ([], 0))

    def test_a_run_that_printed_nothing_says_so(self) -> None:
        self.assertEqual(render({"status": "ok"}).text, "(the code ran and printed nothing)")

    def test_stderr_is_labelled(self) -> None:
        self.assertEqual(render({"status": "ok", "stdout": "a", "stderr": "w\n"}).text, "a\n[stderr]\nw")

    def test_images_are_named_in_the_text_and_attached(self) -> None:
        raw: Dict[str, Any] = {
            "status": "ok",
            "display": [{"text/plain": "<Figure>", "image/png": b64(png(640, 480))}, {"text/plain": "note"}],
            "execution_count": 1,
        }
        out = render(raw, cell=True)
        self.assertEqual(out.text, "note\n[image 1: PNG 640x480 from display 1, attached]")
        self.assertEqual([image.size for image in out.images], [(640, 480)])

    def test_a_run_s_png_files_are_its_images(self) -> None:
        raw = {
            "status": "ok",
            "files": [
                {"path": "plot.png", "content_base64": b64(png(2, 3))},
                {"path": "data.csv", "content_base64": b64(b"a\n")},
            ],
        }
        images = images_of(raw)
        self.assertEqual([(image.name, image.size) for image in images], [("plot.png", (2, 3))])
        self.assertEqual(render(raw).text, "[image 1: PNG 2x3 from plot.png, attached]")


class Failed(unittest.TestCase):
    def test_a_denied_program_lists_each_finding_with_its_hint(self) -> None:
        raw = {
            "status": "denied",
            "check": {
                "decision": "deny",
                "findings": [
                    {
                        "rule": "IMP101",
                        "message": "module `subprocess` is denied by the policy",
                        "hint": "use the standard library's data modules",
                        "span": {"line": 1, "column": 8},
                    }
                ],
            },
        }
        self.assertEqual(
            render(raw).text,
            "warden did not run this code: the policy denied it (decision `deny`).\n"
            "Findings:\n"
            "- IMP101 (line 1, column 8): module `subprocess` is denied by the policy\n"
            "  hint: use the standard library's data modules\n"
            "Nothing of this code ran. Change the code as the hints say and try again.",
        )

    def test_a_held_review_says_how_a_person_approves_it(self) -> None:
        text = render({"status": "review_required", "review": {"id": "r-1", "status": "pending"}}).text
        self.assertIn("It is held for review as `r-1` (status `pending`).", text)
        self.assertIn('`Client.run_review("r-1")`', text)

    def test_an_error_shows_its_traceback_once(self) -> None:
        traceback = "Traceback (most recent call last):\n  File \"x.py\", line 1\nZeroDivisionError: division by zero"
        raw = {
            "status": "error",
            "stderr": traceback + "\n",
            "error": {"name": "ZeroDivisionError", "value": "division by zero", "traceback": traceback},
        }
        self.assertEqual(render(raw).text, traceback)

    def test_a_limit_is_named_with_its_value_and_advice(self) -> None:
        raw = {"status": "timeout", "message": "the run went past its wall time", "limits": {"wall_time_ms": 5000}}
        self.assertEqual(
            render(raw).text,
            "the run went past its wall time\n"
            "It hit the wall time limit (5,000 ms; `wall_time_ms`). "
            "To stay within it: make the code faster or do less per call.",
        )

    def test_invalid_output_names_each_schema_error(self) -> None:
        raw = {
            "status": "output_invalid",
            "validation": {
                "valid": False,
                "result": "last_line",
                "errors": [{"instance_path": "/n", "schema_path": "/properties/n/type", "message": "not an integer"}],
            },
        }
        self.assertEqual(
            render(raw).text,
            "The output is not valid: the last non-empty line of stdout must be one JSON document that satisfies "
            "the schema.\n- at `/n` (instance path): not an integer (schema: `/properties/n/type`)",
        )

    def test_a_lost_session_is_said(self) -> None:
        out = render({"status": "error", "session_alive": False, "message": "the interpreter died"}, cell=True)
        self.assertIn(SESSION_LOST_TEXT, out.text)
        self.assertFalse(out.ok)


class Bounded(unittest.TestCase):
    def test_long_output_is_cut_in_the_middle_within_the_budget(self) -> None:
        stdout = "".join(f"line {i}\n" for i in range(20_000))
        out = render({"status": "ok", "stdout": stdout}, budget=5_000)
        self.assertLessEqual(len(out.text), 5_000)
        self.assertTrue(out.text.startswith("line 0\nline 1\n"))
        self.assertTrue(out.text.endswith("line 19999"))
        self.assertGreater(out.cut, 0)
        self.assertIn("warden cut", out.text)

    def test_the_default_and_the_smallest_budget(self) -> None:
        stdout = "x" * 100_000
        self.assertLessEqual(len(render({"status": "ok", "stdout": stdout}).text), DEFAULT_TEXT_BUDGET)
        self.assertLessEqual(len(render({"status": "ok", "stdout": stdout}, budget=10).text), MIN_TEXT_BUDGET)

    def test_the_findings_are_kept_whole_when_the_output_is_cut(self) -> None:
        raw = {
            "status": "denied",
            "stdout": "y" * 50_000,
            "check": {"decision": "deny", "findings": [{"rule": "NET901", "message": "sockets are denied"}]},
        }
        self.assertIn("- NET901: sockets are denied", render(raw, budget=2_000).text)


class Images(unittest.TestCase):
    def test_an_image_reads_its_size_from_the_png_header(self) -> None:
        self.assertEqual(Image(png(7, 9)).size, (7, 9))
        self.assertIsNone(Image(b"not a png").size)
        self.assertEqual(Image(png(7, 9), name="Out[2]").describe(1), "[image 1: PNG 7x9 from Out[2], attached]")


if __name__ == "__main__":
    unittest.main()
