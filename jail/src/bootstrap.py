"""warden's bootstrap: the first Python code that runs in the jail.

Run as `python -I /run/warden/bootstrap.py [--hook] [--ban-exec]`. Trusted: it runs before any of the
program's code, from a read-only file the runtime layer counts as library code. In order, it
  1. reads and compiles the program (/run/warden/main.py, UTF-8 text warden decoded: coding
     declarations cannot change what runs), under the program's own name so tracebacks show its lines;
  2. with --hook, loads warden's native module and installs its audit hook with the policy's settings
     (/run/warden/hook.json) and the interpreter's own import path (library code);
  3. with --ban-exec, has the kernel refuse execve and process creation from now on;
  4. runs the program as a fresh `__main__` module.
If 2 or 3 fail, nothing of the program has run: it prints one `warden-bootstrap:` line and exits 125,
which warden reports as `setup_failed`. Everything happens inside one function, so the module's
globals hold nothing.

With --session there is no program: step 4 is warden's session driver (`_session` below), which
reads one JSON request per line from standard input and answers each with JSON lines on a private
copy of standard output (docs/sessions.md has the protocol). Cells run in one persistent
`__main__` namespace, compiled under the name `<cell-N>`, so they are the program's code for the
runtime layer while this file is library code.
"""


def _run():
    import sys

    program = "/run/warden/main.py"
    lib = "/run/warden/lib"
    flags = sys.argv[1:]
    layer_flags = [flag for flag in flags if flag != "--session"]

    def fail(what, err):
        sys.stderr.write(f"warden-bootstrap: {what}: {type(err).__name__}: {err}\n")
        sys.stderr.flush()
        import os
        os._exit(125)

    if "--session" in flags:
        code = None
    else:
        with open(program, encoding="utf-8") as f:
            source = f.read()
        code = compile(source, program, "exec", dont_inherit=True)
    if layer_flags:
        sys.path.insert(0, lib)
        try:
            import _warden_hook
        except BaseException as err:
            fail(f"cannot load the runtime layer's module from {lib}", err)
        finally:
            del sys.path[0]
        if "--hook" in flags:
            try:
                with open("/run/warden/hook.json", encoding="utf-8") as f:
                    settings = f.read()
                roots = [path for path in sys.path if path.startswith("/")]
                prefixes = sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})
                _warden_hook.install(settings, roots, prefixes, __file__)
            except BaseException as err:
                fail("cannot install the runtime layer's audit hook", err)
        if "--ban-exec" in flags:
            try:
                _warden_hook.ban_exec()
            except BaseException as err:
                fail("cannot ban exec in the kernel", err)
        del _warden_hook
    main = type(sys)("__main__")
    main.__dict__.update(__file__=program, __builtins__=__builtins__)
    sys.modules["__main__"] = main
    sys.argv = [program]
    if "--session" in flags:
        del main.__dict__["__file__"]
        _session(main)
        return
    _show_saves_figures()
    try:
        exec(code, main.__dict__)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as err:
        # As the interpreter would print it, without this frame: the traceback starts in the program.
        err.__traceback__ = err.__traceback__.tb_next
        sys.excepthook(type(err), err, err.__traceback__)
        raise SystemExit(1) from None


def _show_saves_figures():
    """One-shot runs: matplotlib's `show()` writes each figure it shows to `figure-N.png` in the
    work dir (collected with the run's files) instead of doing nothing, as Agg would; the figures
    stay open, so a later `savefig` still works."""
    import os
    import sys

    saved = set()

    def show(*args, **kwargs):
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return
        for manager in pyplot._pylab_helpers.Gcf.get_all_fig_managers():
            figure = manager.canvas.figure
            if id(figure) in saved:
                continue
            saved.add(id(figure))
            number = 1
            while os.path.exists(f"figure-{number}.png"):
                number += 1
            try:
                figure.savefig(f"figure-{number}.png", format="png", bbox_inches="tight")
            except Exception as err:
                sys.stderr.write(f"warden: could not save a shown figure: {err}\n")

    class Finder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name != "_warden_show":
                return None
            import importlib.machinery

            return importlib.machinery.ModuleSpec(name, Loader())

    class Loader:
        @staticmethod
        def create_module(spec):
            return None

        @staticmethod
        def exec_module(module):
            from matplotlib.backends import backend_agg

            module.FigureCanvas = backend_agg.FigureCanvasAgg
            module.FigureManager = backend_agg.FigureManager
            module.show = show

    sys.meta_path.append(Finder)
    if os.environ.get("MPLBACKEND", "Agg").lower() == "agg":
        os.environ["MPLBACKEND"] = "module://_warden_show"


def _session(main):
    """warden's session driver: runs cells in `main`'s namespace until standard input ends."""
    import ast
    import base64
    import io
    import json
    import linecache
    import os
    import resource
    import signal
    import sys
    import time
    import traceback

    # Answers go to a private copy of standard output; descriptor 1 then points at standard error,
    # so nothing a cell writes below Python's `sys.stdout` can be mistaken for an answer.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", closefd=True)
    os.dup2(2, 1)
    commands = os.fdopen(0, "r", encoding="utf-8", errors="replace", closefd=False)

    def send(message):
        answers.write(json.dumps(message, ensure_ascii=True, separators=(",", ":")) + "\n")
        answers.flush()

    class Stream(io.TextIOBase):
        """A cell's `sys.stdout` or `sys.stderr`: each write is sent as it happens, up to a cap."""

        def __init__(self, name, cell, cap):
            self.name, self.cell, self.cap, self.sent = name, cell, cap, 0

        @property
        def encoding(self):
            return "utf-8"

        def writable(self):
            return True

        def isatty(self):
            return False

        def write(self, text):
            if not isinstance(text, str):
                raise TypeError(f"write() argument must be str, not {type(text).__name__}")
            room = self.cap - self.sent
            if text and room > 0:
                chunk = text[:room]
                send({"id": self.cell, "stream": self.name, "text": chunk})
            self.sent += len(text)
            return len(text)

    # Figures: a matplotlib backend of warden's, served from here, captures what `plt.show()`
    # shows; what is left open at the end of a cell is captured then (as Jupyter's inline backend).
    shown = []

    def capture_figures(figures=None):
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return
        if figures is None:
            figures = [manager.canvas.figure for manager in pyplot._pylab_helpers.Gcf.get_all_fig_managers()]
        for figure in figures:
            try:
                shown.append({"image/png": png_of(figure), "text/plain": repr(figure)})
            except Exception:
                pass
            pyplot.close(figure)

    def png_of(figure):
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        return base64.b64encode(buffer.getvalue()).decode("ascii")

    class InlineFinder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name != "_warden_inline":
                return None
            import importlib.machinery

            return importlib.machinery.ModuleSpec(name, InlineLoader())

    class InlineLoader:
        @staticmethod
        def create_module(spec):
            return None

        @staticmethod
        def exec_module(module):
            from matplotlib.backends import backend_agg

            module.FigureCanvas = backend_agg.FigureCanvasAgg
            module.FigureManager = backend_agg.FigureManager
            module.show = lambda *args, **kwargs: capture_figures()

    sys.meta_path.append(InlineFinder)
    os.environ["MPLBACKEND"] = "module://_warden_inline"

    def bundle(value):
        """The MIME bundle of a cell's value, as Jupyter shows it."""
        out = {"text/plain": plain(value)}
        html = getattr(type(value), "_repr_html_", None)
        if html is not None:
            try:
                text = html(value)
                if isinstance(text, str):
                    out["text/html"] = text
            except Exception:
                pass
        figure_type = getattr(sys.modules.get("matplotlib.figure"), "Figure", None)
        if figure_type is not None and isinstance(value, figure_type):
            try:
                out["image/png"] = png_of(value)
            except Exception:
                pass
        return out

    def plain(value):
        import pprint

        if type(value) in (list, dict, tuple, set, frozenset):
            try:
                return pprint.pformat(value, width=79, sort_dicts=False)
            except Exception:
                pass
        return repr(value)

    def error_of(err, name):
        frames = []
        for frame, line in traceback.walk_tb(err.__traceback__):
            filename = frame.f_code.co_filename
            if filename.startswith("<cell-"):
                number = filename[6:-1]
                text = linecache.getline(filename, line).strip()
                frames.append(f"Cell In[{number}], line {line}" + (f"\n    {text}" if text else ""))
        last = traceback.format_exception_only(type(err), err)
        value = str(err)
        return {"name": type(err).__name__, "value": value, "traceback": frames + ["".join(last).rstrip()]}

    class CellTimeout(KeyboardInterrupt):
        pass

    def on_alarm(signum, frame):
        raise CellTimeout()

    def under_work(path):
        """`/work/<path>` for a relative path the host already checked, or an error."""
        if not isinstance(path, str) or path.startswith("/") or ".." in path.split("/") or "\0" in path:
            raise ValueError(f"bad path {path!r}")
        return os.path.join("/work", path)

    def put(request):
        target = under_work(request["path"])
        data = base64.b64decode(request["data"], validate=True)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return {"bytes": len(data)}

    def listing(request):
        found, limit = [], int(request.get("max_files", 10000))
        for top, dirs, names in os.walk("/work", followlinks=False):
            dirs.sort()
            for name in sorted(names):
                full = os.path.join(top, name)
                info = os.lstat(full)
                if stat_module.S_ISREG(info.st_mode):
                    found.append({"path": os.path.relpath(full, "/work"), "size": info.st_size})
                    if len(found) >= limit:
                        return {"files": found, "truncated": True}
        return {"files": found, "truncated": False}

    def get(request):
        target = under_work(request["path"])
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            if not stat_module.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise ValueError("not a regular file")
            data = f.read(int(request.get("max_bytes", 1 << 26)) + 1)
        return {"data": base64.b64encode(data).decode("ascii")}

    import stat as stat_module

    operations = {"put": put, "list": listing, "get": get}
    send({"ready": True, "pid": os.getpid()})
    for line in commands:
        try:
            request = json.loads(line)
            ident = int(request["id"])
            operation = request.get("op", "execute")
            if operation in operations:
                try:
                    answer = operations[operation](request)
                    answer.update(id=ident, status="ok")
                except Exception as err:
                    answer = {"id": ident, "status": "error", "message": f"{type(err).__name__}: {err}"}
                send(answer)
                continue
            cell = int(request["count"])
            source = request["code"]
            timeout = float(request.get("timeout_ms", 0)) / 1000.0
            caps = int(request.get("stdout_bytes", 1 << 20)), int(request.get("stderr_bytes", 1 << 20))
        except Exception as err:
            send({"protocol_error": f"{type(err).__name__}: {err}"})
            continue
        name = f"<cell-{cell}>"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        shown.clear()
        out, err_stream = Stream("stdout", ident, caps[0]), Stream("stderr", ident, caps[1])
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err_stream
        status, result, error = "ok", None, None
        started = time.monotonic()
        try:
            tree = ast.parse(source, filename=name)
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
                last = ast.Expression(tree.body.pop().value)
            body = compile(tree, name, "exec", dont_inherit=True)
            tail = compile(last, name, "eval", dont_inherit=True) if last is not None else None
            if timeout > 0:
                signal.signal(signal.SIGALRM, on_alarm)
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                exec(body, main.__dict__)
                value = eval(tail, main.__dict__) if tail is not None else None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            if value is not None:
                main.__dict__["_"] = value
                result = bundle(value)
        except CellTimeout as err:
            status, error = "timeout", error_of(err, name)
            error["name"] = "KeyboardInterrupt"
        except SystemExit as err:
            status, error = "error", error_of(err, name)
        except BaseException as err:
            status, error = "error", error_of(err, name)
        finally:
            sys.stdout, sys.stderr = saved
        try:
            capture_figures()
        except Exception:
            pass
        send({
            "id": ident,
            "status": status,
            "result": result,
            "display": list(shown),
            "error": error,
            "stdout_chars": out.sent,
            "stderr_chars": err_stream.sent,
            "duration_ms": int((time.monotonic() - started) * 1000),
            "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        })
    answers.flush()


_run()
