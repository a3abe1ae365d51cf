"""Host unit tests of warden's bootstrap (jail/src/bootstrap.py), without a jail.

The bootstrap is imported (which runs nothing: `_run()` is behind its `__main__` guard) and its
parts are tested one by one: the pretty printer against what IPython prints (the strings below are
IPython 8's, and `IPythonAgrees` compares with IPython itself when it is importable), the MIME
bundles a cell's value gets, the framing of answers, the host's file operations, and whole sessions
run by the interpreter as the jail runs it (`python -I bootstrap.py --session`), minus the jail.

Run: `python3 -m unittest discover -s jail/tests/python` (jail/tests/bootstrap_python.rs does, with
/usr/bin/python3, the jail's interpreter). `WARDEN_BOOTSTRAP` names another bootstrap file.
"""

import base64
import collections
import datetime
import importlib.util
import io
import json
import os
import py_compile
import re
import subprocess
import sys
import tempfile
import types
import unittest
from pathlib import Path

BOOTSTRAP = Path(
    os.environ.get("WARDEN_BOOTSTRAP")
    or Path(__file__).resolve().parents[2] / "src" / "bootstrap.py"
)


def load():
    """The bootstrap as a module named `warden_bootstrap` (its own name when the jail runs it is
    `__main__`)."""
    spec = importlib.util.spec_from_file_location("warden_bootstrap", BOOTSTRAP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


B = load()


def session(requests, *args, python=sys.executable, script=BOOTSTRAP, timeout=60):
    """Runs the bootstrap as the jail's interpreter would (`-I`, `--session`) with `requests` (JSON
    lines) on its standard input; returns its answers (standard output) as lines and its standard
    error."""
    stdin = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)
    done = subprocess.run(
        [python, "-I", str(script), "--session", *args],
        input=stdin.encode(),
        capture_output=True,
        timeout=timeout,
        env={"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir()},
    )
    return done.stdout.decode("utf-8").splitlines(), done.stderr.decode("utf-8", "replace")


class Importing(unittest.TestCase):
    def test_importing_the_bootstrap_runs_nothing(self):
        main, argv, meta_path = sys.modules["__main__"], list(sys.argv), list(sys.meta_path)
        module = load()
        self.assertIs(sys.modules["__main__"], main)
        self.assertEqual(sys.argv, argv)
        self.assertEqual(sys.meta_path, meta_path)
        self.assertTrue(callable(module._run))

    def test_the_module_s_globals_hold_no_module_file_or_descriptor(self):
        # A program reaches them (a function's `__globals__`): functions, classes and constants only.
        allowed = (types.FunctionType, type, str, dict, list, tuple)
        for name, value in vars(B).items():
            if name.startswith("__") and name.endswith("__"):
                continue
            self.assertIsInstance(value, allowed, name)
            self.assertNotIsInstance(value, (types.ModuleType, io.IOBase), name)

    def test_the_file_runs_as_a_script_and_as_its_compiled_form(self):
        # The jail runs `bootstrap.py` (sessions) or `bootstrap.pyc` (one-shot runs): both are the
        # interpreter's `__main__`, so `_run()` runs.
        cell = {"id": 1, "count": 1, "code": "6 * 7"}
        lines, stderr = session([cell])
        self.assertEqual(len(lines), 2, stderr)
        self.assertEqual(json.loads(lines[1])["result"], {"text/plain": "42"})
        with tempfile.TemporaryDirectory() as tmp:
            compiled = Path(tmp) / "bootstrap.pyc"
            py_compile.compile(str(BOOTSTRAP), cfile=str(compiled), dfile="/run/warden/bootstrap.py", doraise=True)
            lines, stderr = session([cell], script=compiled)
        self.assertEqual(len(lines), 2, stderr)
        self.assertEqual(json.loads(lines[1])["result"], {"text/plain": "42"})


class A:
    pass


def f(a, b=2, *c, **d):
    pass


class PrettyPrinter(unittest.TestCase):
    """`text/plain` as IPython's PlainTextFormatter writes it (79 columns, 1000 items)."""

    def test_builtins_print_as_ipython_prints_them(self):
        cycle = [1]
        cycle.append(cycle)
        cases = [
            (list(range(30)), "[" + ",\n ".join(str(i) for i in range(30)) + "]"),
            ({"b": 1, "a": [1, 2]}, "{'b': 1, 'a': [1, 2]}"),
            (
                {"key%d" % i: list(range(i)) for i in range(6)},
                "{'key0': [],\n 'key1': [0],\n 'key2': [0, 1],\n 'key3': [0, 1, 2],\n"
                " 'key4': [0, 1, 2, 3],\n 'key5': [0, 1, 2, 3, 4]}",
            ),
            ({3, 1, 2}, "{1, 2, 3}"),
            (set(), "set()"),
            (frozenset({"b", "a"}), "frozenset({'a', 'b'})"),
            ((1,), "(1,)"),
            (cycle, "[1, [...]]"),
            (["x" * 30, "y" * 30, "z" * 30], "['" + "x" * 30 + "',\n '" + "y" * 30 + "',\n '" + "z" * 30 + "']"),
            (None, "None"),
            (1.5, "1.5"),
            ("é", "'é'"),
            (b"\x00a", "b'\\x00a'"),
            (types.MappingProxyType({"a": 1}), "mappingproxy({'a': 1})"),
            (range(3), "range(0, 3)"),
        ]
        for value, expected in cases:
            with self.subTest(value=expected):
                self.assertEqual(B._pretty(value), expected)

    def test_the_standard_library_s_types_print_as_ipython_prints_them(self):
        cases = [
            (collections.Counter("abracadabra"), "Counter({'a': 5, 'b': 2, 'r': 2, 'c': 1, 'd': 1})"),
            (collections.OrderedDict(a=1, b=2), "OrderedDict([('a', 1), ('b', 2)])"),
            (collections.OrderedDict(), "OrderedDict()"),
            (collections.deque([1, 2], maxlen=3), "deque([1, 2], maxlen=3)"),
            (collections.defaultdict(list, {1: [2]}), "defaultdict(list, {1: [2]})"),
            (re.compile(r"a\d+", re.I | re.M), "re.compile(r'a\\d+', re.IGNORECASE|re.MULTILINE|re.UNICODE)"),
            (f, f"<function {__name__}.f(a, b=2, *c, **d)>"),
            (len, "<function len(obj, /)>"),
            (collections.OrderedDict, "collections.OrderedDict"),
            (int, "int"),
            (ValueError("bad", 2), "ValueError('bad', 2)"),
            (types.SimpleNamespace(a=1, b="two"), "namespace(a=1, b='two')"),
            (datetime.datetime(2024, 1, 2, 3, 4, 5), "datetime.datetime(2024, 1, 2, 3, 4, 5)"),
            (collections.UserList([1, 2]), "UserList([1, 2])"),
        ]
        for value, expected in cases:
            with self.subTest(value=expected):
                self.assertEqual(B._pretty(value), expected)

    def test_an_object_without_a_repr_of_its_own_shows_its_class_and_address(self):
        value = A()
        self.assertEqual(B._pretty(value), f"<{__name__}.A at 0x{id(value):x}>")

    def test_a_long_container_stops_at_1000_items(self):
        text = B._pretty(list(range(1005)))
        self.assertTrue(text.endswith(" 999,\n ...]"), text[-30:])
        self.assertEqual(text.count("\n"), 1000)

    def test_repr_pretty_gets_a_printer_with_groups_and_breaks(self):
        class P:
            def _repr_pretty_(self, p, cycle):
                with p.group(2, "P(", ")"):
                    p.text("a")
                    p.breakable()
                    p.text("b" * 90)

        self.assertEqual(B._pretty(P()), "P(a\n  " + "b" * 90 + ")")

    def test_a_multi_line_repr_keeps_its_lines(self):
        class M:
            def __repr__(self):
                return "first\nsecond"

        self.assertEqual(B._pretty([M()]), "[first\n second]")

    def test_a_failing_printer_falls_back_to_repr(self):
        class Broken:
            def _repr_pretty_(self, p, cycle):
                raise RuntimeError("no")

            def __repr__(self):
                return "Broken()"

        self.assertEqual(B._plain(Broken()), "Broken()")


class IPythonAgrees(unittest.TestCase):
    """The port against IPython itself, where IPython is installed (the Jupyter venv of
    scripts/jupyter-venv.sh; not the jail's interpreter)."""

    def test_the_port_prints_what_ipython_prints(self):
        try:
            from IPython.lib.pretty import pretty
        except ImportError:
            self.skipTest("IPython is not installed")
        cycle = {}
        cycle["self"] = cycle
        values = [
            list(range(300)),
            {i: "v" * i for i in range(40)},
            [{"a": (1, 2, {3, 4})}, collections.Counter("mississippi")],
            cycle,
            A,
            A(),
            ValueError("x" * 100, list(range(30))),
            types.SimpleNamespace(values=list(range(50))),
        ]
        for value in values:
            with self.subTest(value=type(value).__name__):
                self.assertEqual(B._pretty(value), pretty(value, max_width=79, max_seq_length=1000))


class Bundles(unittest.TestCase):
    """The MIME bundle of a cell's value, as Jupyter's display formatter makes it."""

    def test_a_plain_value_has_text_only(self):
        self.assertEqual(B._bundle([1, 2]), {"text/plain": "[1, 2]"})

    def test_html_joins_the_text(self):
        class H:
            def _repr_html_(self):
                return "<b>h</b>"

            def __repr__(self):
                return "H()"

        self.assertEqual(B._bundle(H()), {"text/plain": "H()", "text/html": "<b>h</b>"})

    def test_a_mimebundle_comes_first_and_keeps_text_values_only(self):
        class M:
            def _repr_mimebundle_(self, include=None, exclude=None):
                return {"text/plain": "mb", "text/markdown": "# m", "application/json": {"a": 1}}, {}

            def _repr_html_(self):
                return "<i>not used: the bundle had none, so it is added</i>"

        self.assertEqual(
            B._bundle(M()),
            {"text/plain": "mb", "text/markdown": "# m", "text/html": "<i>not used: the bundle had none, so it is added</i>"},
        )

    def test_a_type_s_own_printer_wins_over_a_mimebundle_s_text(self):
        class L(list):
            def _repr_mimebundle_(self, include=None, exclude=None):
                return {"text/plain": "theirs"}

        self.assertEqual(B._bundle(L([1])), {"text/plain": "[1]"})

    def test_png_bytes_are_base64(self):
        class Png:
            def _repr_png_(self):
                return b"\x89PNG-bytes"

            def __repr__(self):
                return "Png()"

        self.assertEqual(
            B._bundle(Png()),
            {"text/plain": "Png()", "image/png": base64.b64encode(b"\x89PNG-bytes").decode("ascii")},
        )

    def test_a_class_is_not_asked_for_its_representations(self):
        class C:
            def _repr_html_(self):
                raise AssertionError("called on the class")

        self.assertEqual(B._bundle(C), {"text/plain": f"{__name__}.{C.__qualname__}"})

    def test_a_proxy_that_answers_every_attribute_gets_text_only(self):
        class Proxy:
            def __getattr__(self, name):
                return lambda *args, **kwargs: "<p>anything</p>"

            def __repr__(self):
                return "Proxy()"

        self.assertEqual(B._bundle(Proxy()), {"text/plain": "Proxy()"})

    def test_a_failing_representation_is_left_out(self):
        class Bad:
            def _repr_html_(self):
                raise RuntimeError("no")

            def __repr__(self):
                return "Bad()"

        self.assertEqual(B._bundle(Bad()), {"text/plain": "Bad()"})

    def test_display_adds_each_object_s_bundle_to_what_the_cell_shows(self):
        shown = []
        display = B._display_into(shown)
        display(1, "two")
        self.assertEqual(shown, [{"text/plain": "1"}, {"text/plain": "'two'"}])
        # It refers to what the cell shows and to nothing else of the driver's.
        self.assertEqual([cell.cell_contents for cell in display.__closure__], [shown])


class Framing(unittest.TestCase):
    """What the driver writes to the host: one JSON object a line, ASCII, without spaces."""

    def test_an_answer_is_one_ascii_line_without_spaces(self):
        out = io.StringIO()
        B._Answers(out).send({"id": 1, "status": "ok", "text": "é €\n"})
        self.assertEqual(out.getvalue(), '{"id":1,"status":"ok","text":"\\u00e9 \\u20ac\\n"}\n')

    def test_a_stream_sends_each_write_up_to_its_cap_and_counts_all(self):
        sent = []
        stream = B._Stream("stdout", 7, 5, sent.append)
        self.assertEqual(stream.write("abc"), 3)
        self.assertEqual(stream.write("defg"), 4)
        self.assertEqual(stream.write("h"), 1)
        self.assertEqual(stream.write(""), 0)
        self.assertEqual(
            sent,
            [{"id": 7, "stream": "stdout", "text": "abc"}, {"id": 7, "stream": "stdout", "text": "de"}],
        )
        self.assertEqual(stream.sent, 8)
        self.assertEqual((stream.encoding, stream.writable(), stream.isatty()), ("utf-8", True, False))
        with self.assertRaisesRegex(TypeError, "write\\(\\) argument must be str, not bytes"):
            stream.write(b"x")

    def test_a_stream_reaches_the_channel_and_nothing_else(self):
        out = io.StringIO()
        channel = B._Answers(out)
        stream = B._Stream("stderr", 1, 10, channel.send)
        self.assertEqual(set(vars(stream)), {"name", "cell", "cap", "sent", "_send"})
        self.assertEqual(set(vars(channel)), {"_file"})

    def test_an_error_names_the_cell_s_frames_only(self):
        name = "<cell-3>"
        source = "def g():\n    raise KeyError('k')\ng()\n"
        import linecache

        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        try:
            exec(compile(source, name, "exec"), {})
        except KeyError as err:
            error = B._error_of(err)
        self.assertEqual(
            error,
            {
                "name": "KeyError",
                "value": "'k'",
                "traceback": ["Cell In[3], line 3\n    g()", "Cell In[3], line 2\n    raise KeyError('k')", "KeyError: 'k'"],
            },
        )

    def test_a_timeout_s_last_line_is_the_one_the_host_has_always_had(self):
        try:
            B._on_alarm(14, None)
        except KeyboardInterrupt as err:
            error = B._error_of(err)
        self.assertEqual(error["traceback"], ["warden_bootstrap._session.<locals>.CellTimeout"])
        self.assertEqual(error["value"], "")

    def test_a_semicolon_after_the_last_expression_silences_it(self):
        import ast

        for source, silenced in [("x", False), ("x;", True), ("x ;  # c", True), ("x  # ;", False), ("'é';", True)]:
            with self.subTest(source=source):
                node = ast.parse(source).body[-1]
                self.assertEqual(B._silenced(source, node), silenced)


class Files(unittest.TestCase):
    """The host's `put`, `list` and `get` (in /work in the jail; in a temporary directory here)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_file_put_in_pieces_is_whole_and_a_piece_out_of_place_is_refused(self):
        piece = lambda data, offset: {"path": "in/big.bin", "data": base64.b64encode(data).decode(), "offset": offset}
        self.assertEqual(B._put(piece(b"abc", 0), self.root), {"bytes": 3})
        self.assertEqual(B._put(piece(b"def", 3), self.root), {"bytes": 3})
        with open(os.path.join(self.root, "in/big.bin"), "rb") as f:
            self.assertEqual(f.read(), b"abcdef")
        with self.assertRaises(ValueError):
            B._put(piece(b"x", 2), self.root)
        with self.assertRaises(FileNotFoundError):
            B._put({"path": "absent", "data": "eA==", "offset": 1}, self.root)
        # A new first piece starts the file again.
        B._put(piece(b"z", 0), self.root)
        with open(os.path.join(self.root, "in/big.bin"), "rb") as f:
            self.assertEqual(f.read(), b"z")

    def test_put_then_get_returns_the_bytes(self):
        data = base64.b64encode(b"a,b\n1,2\n").decode()
        self.assertEqual(B._put({"path": "in/data.csv", "data": data}, self.root), {"bytes": 8})
        self.assertEqual(B._get({"path": "in/data.csv"}, self.root), {"data": data})
        # A shorter file replaces a longer one whole.
        B._put({"path": "in/data.csv", "data": base64.b64encode(b"x").decode()}, self.root)
        self.assertEqual(B._get({"path": "in/data.csv"}, self.root), {"data": base64.b64encode(b"x").decode()})

    def test_get_reads_one_byte_past_the_cap(self):
        B._put({"path": "big", "data": base64.b64encode(b"0123456789").decode()}, self.root)
        answer = B._get({"path": "big", "max_bytes": 4}, self.root)
        self.assertEqual(base64.b64decode(answer["data"]), b"01234")

    def test_paths_outside_the_work_dir_are_refused(self):
        for path in ["/etc/passwd", "../x", "a/../../x", "a\0b", 3]:
            with self.subTest(path=path), self.assertRaisesRegex(ValueError, "bad path"):
                B._under_work(path, self.root)

    def test_a_fifo_or_a_link_is_not_a_regular_file(self):
        fifo = os.path.join(self.root, "fifo")
        os.mkfifo(fifo)
        with self.assertRaisesRegex(ValueError, "not a regular file"):
            B._get({"path": "fifo"}, self.root)
        with self.assertRaisesRegex(ValueError, "not a regular file"):
            B._put({"path": "fifo", "data": ""}, self.root)
        os.symlink("/etc/hostname", os.path.join(self.root, "link"))
        with self.assertRaises(OSError):
            B._get({"path": "link"}, self.root)

    def test_list_names_regular_files_in_order_up_to_a_limit(self):
        for path in ["b.txt", "a/z.txt", "a/y.txt"]:
            B._put({"path": path, "data": base64.b64encode(b"12").decode()}, self.root)
        os.mkfifo(os.path.join(self.root, "fifo"))
        self.assertEqual(
            B._list_files({}, self.root),
            {
                "files": [
                    {"path": "b.txt", "size": 2},
                    {"path": "a/y.txt", "size": 2},
                    {"path": "a/z.txt", "size": 2},
                ],
                "truncated": False,
            },
        )
        self.assertEqual(B._list_files({"max_files": 2}, self.root)["truncated"], True)


class Sessions(unittest.TestCase):
    """Whole sessions, as the jail's interpreter runs the driver (without the jail's layers)."""

    def test_a_session_answers_each_request_in_order(self):
        lines, stderr = session(
            [
                {"id": 1, "count": 1, "code": "print('hi')\nx = 2\nx * 21"},
                {"id": 2, "count": 2, "code": "display([1]);\n1/0"},
                "not json",
                {"id": 3, "op": "template"},
            ]
        )
        answers = [json.loads(line) for line in lines]
        self.assertEqual(answers[0], {"ready": True, "pid": answers[0]["pid"]}, stderr)
        self.assertEqual(lines[1], '{"id":1,"stream":"stdout","text":"hi"}')
        self.assertEqual(lines[2], '{"id":1,"stream":"stdout","text":"\\n"}')
        self.assertEqual(
            list(answers[3]),
            ["id", "status", "result", "display", "error", "stdout_chars", "stderr_chars", "duration_ms", "max_rss_bytes"],
        )
        self.assertEqual((answers[3]["status"], answers[3]["result"], answers[3]["stdout_chars"]), ("ok", {"text/plain": "42"}, 3))
        self.assertEqual(answers[4]["status"], "error")
        self.assertEqual(answers[4]["display"], [{"text/plain": "[1]"}])
        self.assertEqual(answers[4]["error"]["traceback"], ["Cell In[2], line 2\n    1/0", "ZeroDivisionError: division by zero"])
        self.assertEqual(answers[5], {"protocol_error": "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"})
        self.assertEqual(answers[6], {"id": 3, "status": "error", "message": "not a template"})
        self.assertEqual(len(answers), 7)

    def test_a_cell_over_its_time_is_a_timeout(self):
        lines, stderr = session([{"id": 1, "count": 1, "code": "while True: pass", "timeout_ms": 200}])
        answer = json.loads(lines[1])
        self.assertEqual(answer["status"], "timeout", stderr)
        self.assertEqual(answer["error"]["name"], "KeyboardInterrupt")
        self.assertEqual(answer["error"]["traceback"][-1], "_session.<locals>.CellTimeout")

    def test_the_program_finds_display_and_none_of_the_driver(self):
        code = "sorted(k for k in globals() if not k.startswith('__'))"
        lines, stderr = session([{"id": 1, "count": 1, "code": code}])
        self.assertEqual(json.loads(lines[1])["result"], {"text/plain": "['display']"}, stderr)

    def test_a_pooled_jail_runs_one_program_as_a_cold_run_would(self):
        lines, stderr = session(
            [
                {"id": 1, "op": "preload", "modules": ["json", "nosuchmodule"]},
                {"id": 2, "op": "run", "code": "import sys\nprint('ran', 'json' in sys.modules)\nraise SystemExit(3)"},
            ]
        )
        answers = [json.loads(line) for line in lines[:3]]
        self.assertEqual(answers[1]["failed"], ["nosuchmodule: ModuleNotFoundError: No module named 'nosuchmodule'"], stderr)
        self.assertEqual((answers[2]["status"], answers[2]["started"]), ("ok", True))
        # From there on standard output is the program's: a cold program has not imported json.
        self.assertEqual(lines[3:], ["ran False"])


if __name__ == "__main__":
    unittest.main()
