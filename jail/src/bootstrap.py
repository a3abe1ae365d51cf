"""warden's bootstrap: the first Python code that runs in the jail.

Run as `python -I /run/warden/bootstrap.py [--hook] [--ban-exec]` (a one-shot run: this file's code
above the session driver, compiled ahead by the same interpreter, `/run/warden/bootstrap.pyc`). Trusted: it runs before any of the
program's code, from a read-only file the runtime layer counts as library code. In order, it
  1. reads and compiles the program (/run/warden/main.py, UTF-8 text warden decoded: coding
     declarations cannot change what runs), under the program's own name so tracebacks show its lines;
  2. with --hook, loads warden's native module and installs its audit hook with the policy's settings
     (/run/warden/hook.json) and the interpreter's own import path (library code);
  3. with --ban-exec, has the kernel refuse execve and process creation from now on;
  4. runs the program as a fresh `__main__` module.
If 2 or 3 fail, nothing of the program has run: it prints one `warden-bootstrap:` line and exits 125,
which warden reports as `setup_failed`. The steps run in one function, `_run`; the module's globals
hold functions, classes and constants only (no module, file, descriptor or hook function: each
helper imports what it uses), since a program can reach them (a function's `__globals__`).

With --session there is no program: step 4 is warden's session driver (`_session` below), which
reads one JSON request per line from standard input and answers each with JSON lines on a private
copy of standard output (docs/sessions.md has the protocol). Cells run in one persistent
`__main__` namespace, compiled under the name `<cell-N>`, so they are the program's code for the
runtime layer while this file is library code. The driver's parts: `_Driver` (its state and each
request), the framing of answers (`_Answers`, `_Stream`), the host's file operations (`_put`,
`_list_files`, `_get`), what a cell shows (`_bundle`, `_Figures`, the inline backend) and IPython's
pretty printer (`_pretty`, `_Printer`).

The file runs `_run()` only as the interpreter's script (`__main__`); importing it runs nothing, so
the host's unit tests (jail/tests/python/test_bootstrap.py) import it and test its helpers.
"""


def _run():
    import sys

    program = "/run/warden/main.py"
    lib = "/run/warden/lib"
    flags = [flag for flag in sys.argv[1:] if not flag.startswith("--name=")]
    layer_flags = [flag for flag in flags if flag not in ("--session", "--template")]
    template = None
    if "--template" in flags:
        # A warm pool's template (jail/src/template.rs): the data stack it preloads must leave
        # it single-threaded, or it cannot fork. Each run forked from it gets the environment
        # back without these.
        import os

        saved = {name: os.environ.get(name) for name in _ONE_THREAD}
        os.environ.update(_ONE_THREAD)
        template = {"saved": saved}
        del os
    # The name tracebacks and warnings show (`analysis.py`, `<stdin>`): a file name, never one the
    # runtime layer would take for library code (a path under its roots, `<frozen …`).
    name = next((flag[7:] for flag in sys.argv[1:] if flag.startswith("--name=")), "")
    if not name or "/" in name or name.startswith("<frozen"):
        name = program

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
        code = compile(source, name, "exec", dont_inherit=True)
        if name != program:
            # Its lines, for whoever formats a frame of it (no file has that name in the jail).
            _lines_for_linecache(name, source)
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
                # The file name in this code's frames: a one-shot run executes this file compiled
                # ahead (/run/warden/bootstrap.pyc, plan.rs), whose `__file__` names the .pyc.
                bootstrap = _run.__code__.co_filename
                # A template must stay single-threaded to fork: each run's process starts the
                # thread that watches the hook after its fork (template_serve).
                _warden_hook.install(settings, roots, prefixes, bootstrap, template is None)
            except BaseException as err:
                fail("cannot install the runtime layer's audit hook", err)
            # This frame stays below the program's: keep nothing of the hook's in it.
            settings = roots = prefixes = bootstrap = None
        if template is not None:
            # The template forks each run's jail: the exec ban is installed in each run's
            # process, after the fork, with the rest of the run's confinement.
            template["serve"] = _warden_hook.template_serve
            template["ban_exec"] = _warden_hook.ban_exec if "--ban-exec" in flags else None
        elif "--ban-exec" in flags:
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
        # What a program finds in sys.modules when it starts (a pooled jail hides the rest).
        baseline = set(sys.modules)
        run = _session(main, baseline, template)
        if run is None:
            return
        # A pooled one-shot run: the program arrived after the interpreter started; from here on it
        # is run exactly as a cold run's, under the same file name.
        import linecache

        source = run["code"]
        # The name tracebacks show, as a cold run's --name (checked the same way).
        shown = run.get("name")
        if not isinstance(shown, str) or not shown or "/" in shown or shown.startswith("<frozen"):
            shown = program
        code = compile(source, shown, "exec", dont_inherit=True)
        linecache.cache[shown] = (len(source), None, source.splitlines(True), shown)
        del linecache
        main.__dict__["__file__"] = program
        _show_saves_figures(cold=False)
        _joblib_in_threads()
        matplotlib = run.get("_matplotlib")
        if matplotlib is not None:
            # Imported before the program: its backend becomes the one a cold run's import picks,
            # and the name it gives is a cold run's too.
            import os

            try:
                matplotlib.rcParams["backend"] = os.environ.get("MPLBACKEND", "agg")
                _name_the_backend(matplotlib)
            except Exception:
                pass
            del os
        exits = run["_exits"]
        del matplotlib, run
        try:
            _execute(code, main, pooled=True)
            status = 0
        except SystemExit as stop:
            status = _exit_status(stop)
        _exit_fast(status, main, exits)
    _show_saves_figures()
    _joblib_in_threads()
    # Compiled under a name no file has, its lines are in linecache only, as a pooled run's are.
    _execute(code, main, pooled=name != program)


def _lines_for_linecache(name, source):
    """Puts `source` into linecache under `name` when something first imports linecache (a
    traceback, a warning, `inspect`), or now if something already has. Importing it here would cost
    every run ~6 ms (it imports tokenize, re, enum, collections: two thirds of a bare interpreter's
    start) for lines that only an error or a warning reads."""
    import sys

    entry = (len(source), None, source.splitlines(True), name)
    if "linecache" in sys.modules:
        sys.modules["linecache"].cache[name] = entry
        return

    class Lines:
        @staticmethod
        def find_spec(fullname, path=None, target=None):
            if fullname != "linecache":
                return None
            sys.meta_path.remove(Lines)
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                spec = find(fullname, path, target) if find else None
                if spec is not None:
                    break
            else:
                return None
            load = spec.loader.exec_module

            def exec_module(module):
                load(module)
                module.cache[name] = entry

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Lines)


def _execute(code, main, pooled=False):
    """Runs the program as `__main__`; an exception is printed as the interpreter would (exit 1).
    `pooled`: the jail's program file is empty (the program came later, into linecache), so the
    traceback is printed by Python's `traceback`, which reads linecache, in the format of the
    interpreter's own."""
    import sys

    try:
        exec(code, main.__dict__)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as err:
        # As the interpreter would print it, without this frame: the traceback starts in the program.
        err.__traceback__ = err.__traceback__.tb_next
        if pooled and sys.excepthook is sys.__excepthook__:
            import traceback

            traceback.print_exception(type(err), err, err.__traceback__)
        else:
            sys.excepthook(type(err), err, err.__traceback__)
        raise SystemExit(1) from None


def _exit_status(stop):
    """The exit status the interpreter gives an uncaught SystemExit (printing its message)."""
    import sys

    code = stop.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(f"{code}\n")
    except Exception:
        pass
    return 1


def _exit_fast(status, main, exits):
    """A pooled run's end: what the interpreter's shutdown does that a program can see (wait for
    its threads, run the atexit callbacks, release its objects so their finalizers run and open
    files are flushed, flush the standard streams), without tearing down every module of the
    preloaded data stack one by one, which takes hundreds of milliseconds and nobody can see."""
    import os
    import sys

    threading, atexit, gc = exits
    for step in (
        lambda: threading is not None and threading._shutdown(),
        lambda: atexit is not None and atexit._run_exitfuncs(),
        lambda: _release(main.__dict__),
        lambda: gc is not None and gc.collect(),
    ):
        try:
            step()
        except BaseException:
            pass
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass
    os._exit(status)


def _release(namespace):
    """Releases the program's globals as its objects' finalizers expect at the interpreter's end:
    its own objects first, the latest bound first, while the modules it imported are still bound
    (a `__del__` that uses `os` finds it, as it does when the interpreter's collector finalizes the
    program's objects before it clears the modules), then the rest."""
    import sys

    module_type = type(sys)
    own = [
        name
        for name, value in namespace.items()
        if name != "__builtins__" and not isinstance(value, module_type)
    ]
    for name in reversed(own):
        try:
            del namespace[name]
        except BaseException:
            pass
    namespace.clear()


def _show_saves_figures(cold=True):
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

    class NamesTheBackend:
        """Finds `matplotlib` as the import system would and, once its body has run, has
        `matplotlib.get_backend()` answer `agg` for warden's backend (what the program would see
        unconfined, where Agg is the backend without a display)."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            if name != "matplotlib":
                return None
            import importlib.machinery

            spec = importlib.machinery.PathFinder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _BackendNamingLoader(spec.loader)
            return spec

    sys.meta_path.append(Finder)
    if os.environ.get("MPLBACKEND", "Agg").lower() == "agg":
        os.environ["MPLBACKEND"] = "module://_warden_show"
        # A pooled run names the backend of the matplotlib it preloaded instead (`_run`): its
        # hidden modules come back through the finder first on `sys.meta_path`, not this one.
        if cold and "matplotlib" not in sys.modules:
            sys.meta_path.insert(0, NamesTheBackend)


class _BackendNamingLoader:
    """matplotlib's own loader, after which `get_backend` is wrapped (`_name_the_backend`)."""

    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _name_the_backend(module)


def _name_the_backend(matplotlib):
    """`matplotlib.get_backend()` (and `pyplot.get_backend`, the same function) answers `agg` where
    the backend is warden's `module://_warden_show`, which saves what `plt.show()` shows."""
    real = matplotlib.get_backend
    if getattr(real, "_warden_named", False):
        return

    def get_backend(*args, **kwargs):
        name = real(*args, **kwargs)
        return "agg" if name == "module://_warden_show" else name

    get_backend.__doc__ = real.__doc__
    get_backend.__name__ = real.__name__
    get_backend.__qualname__ = real.__qualname__
    get_backend.__module__ = real.__module__
    get_backend._warden_named = True
    matplotlib.get_backend = get_backend
    # A pooled jail imported pyplot before the program, with the function it had then.
    pyplot = matplotlib.__dict__.get("pyplot")
    if pyplot is not None and pyplot.__dict__.get("get_backend") is real:
        pyplot.get_backend = get_backend


def _joblib_in_threads():
    """joblib runs `n_jobs != 1` work in threads rather than processes (loky, multiprocessing), which
    the jail refuses: `JOBLIB_MULTIPROCESSING=0` is joblib's own switch. Its results are the same;
    `joblib.cpu_count()` then answers 1, so `n_jobs=-1` runs the work one task at a time."""
    import os

    os.environ.setdefault("JOBLIB_MULTIPROCESSING", "0")


# --- the session driver: a one-shot run's copy of this file ends above this line (plan.rs,
# `one_shot_bootstrap`), so its interpreter does not compile what follows; one-shot code goes above.
def _preload(names):
    """Imports `names` (a pooled jail, before any program). The hider it returns hides every module
    not in the set it is given from `sys.modules`: a hidden module comes back the moment something
    imports it, so the import raises the same audit event, judged the same way, as in a cold
    interpreter that has to load it (the module itself is not run again). Importing a preloaded
    name (or a submodule of it) brings back what a cold import of it loads: the modules its own
    preload loaded, with those of the earlier preloaded names it refers to. Returns (the names that
    failed to import, the hider).

    With the runtime layer installed, the hidden modules are kept by its native module, out of
    Python's reach (`hook/src/hidden.rs`: its finder, first on `sys.meta_path`, gives a module back
    only through an import whose audit event the hook allowed). Without it (no import rule to keep)
    the finder below, in Python, keeps them."""
    import sys

    native = next(
        (f for f in sys.meta_path if type(f).__name__ == "HiddenModules" and type(f).__module__ == "warden"),
        None,
    )
    # Taken now: importing anything from the revealer could recurse into it.
    ModuleSpec = type(sys.__spec__)
    ModuleType = type(sys)
    failed = []
    closures = []
    for name in names:
        before = set(sys.modules)
        try:
            __import__(name)
        except Exception as err:
            failed.append(f"{name}: {type(err).__name__}: {err}")
            continue
        added = set(sys.modules) - before
        closure = set(added)
        for earlier, loaded in closures:
            objects = {id(sys.modules[other]) for other in loaded if sys.modules.get(other) is not None}
            refers = any(
                isinstance(value, ModuleType) and id(value) in objects
                for module in added
                for value in list(getattr(sys.modules.get(module), "__dict__", {}).values())
            )
            if refers:
                closure |= loaded
        closures.append((name, closure))

    if native is not None:
        groups = [(name, sorted(closure)) for name, closure in closures]

        def hide_natively(keep):
            native.hide(keep, groups)

        return failed, hide_natively

    hidden = {}
    specs = {}

    def reveal(name, module):
        """Brings back what a cold import of `name` would have loaded, from what is hidden: its
        preload's modules (when it is a preloaded name or below one), and every hidden module these
        refer to (a module bound in their namespace, as `import re` binds `re`), transitively."""
        todo = [module]
        for preloaded, closure in closures:
            if name == preloaded or name.startswith(preloaded + "."):
                todo.extend(other for other in closure if other in hidden)
        while todo:
            current = todo.pop()
            if isinstance(current, str):
                if current not in hidden or current in sys.modules:
                    continue
                specs.pop(current, None)
                module = hidden.pop(current)
                sys.modules[current] = module
                current = module
            for value in list(getattr(current, "__dict__", {}).values()):
                if isinstance(value, ModuleType):
                    other = getattr(value, "__name__", None)
                    if isinstance(other, str) and hidden.get(other) is value:
                        todo.append(other)

    class Loader:
        @staticmethod
        def create_module(spec):
            return hidden.pop(spec.name)

        @staticmethod
        def exec_module(module):
            # The import machinery gave the module our spec: it gets its own back.
            name = module.__spec__.name
            module.__spec__ = specs.pop(name, None)
            reveal(name, module)

    class Revealer:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name not in hidden:
                return None
            return ModuleSpec(name, Loader(), is_package=hasattr(hidden[name], "__path__"))

    def hide(keep):
        for name in list(sys.modules):
            module = sys.modules[name]
            if name not in keep and module is not None:
                hidden[name] = sys.modules.pop(name)
                specs[name] = getattr(module, "__spec__", None)
        if Revealer not in sys.meta_path:
            sys.meta_path.insert(0, Revealer)

    return failed, hide


# What keeps a template's libraries single-threaded: the thread pools of OpenBLAS, OpenMP, MKL,
# numexpr and Accelerate, and the background thread of pyarrow's jemalloc (pandas imports pyarrow).
_ONE_THREAD = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
}


def _reseed_targets():
    """What `_reseed_after_fork` reseeds: numpy's random module and tempfile, taken while they are
    in `sys.modules` (the template hides them before it forks)."""
    import sys

    return sys.modules.get("numpy.random"), sys.modules.get("tempfile")


def _reseed_after_fork(targets):
    """What a fork copied that must differ in every run: `random` was reseeded by its own fork
    handler; numpy's global generator and tempfile's name sequence were not (tempfile checks
    the pid, which a forked run's process can share with the template: both are pid 2 of their
    own namespaces)."""
    numpy_random, tempfile = targets
    if numpy_random is not None:
        numpy_random.seed()
    if tempfile is not None:
        tempfile._name_sequence = None


def _session(main, baseline=frozenset(), template=None):
    """warden's session driver: runs cells in `main`'s namespace until standard input ends. A
    pooled jail is a session that first gets `preload` (modules imported before any program) and
    then either cells (a session) or one `run` (a program run as a cold run would run it: this
    returns its request and `_run` runs it)."""
    # The driver's modules, imported before anything is preloaded (a pooled session keeps them
    # in `sys.modules`; the helpers below import them again by name, which finds them there).
    import ast  # noqa: F401
    import base64  # noqa: F401
    import io  # noqa: F401
    import json  # noqa: F401
    import linecache  # noqa: F401
    import os
    import resource  # noqa: F401
    import signal
    import sys
    import time  # noqa: F401
    import traceback  # noqa: F401
    import errno  # noqa: F401
    import stat  # noqa: F401

    # Answers go to a private copy of standard output; descriptor 1 then points at standard error,
    # so nothing a cell writes below Python's `sys.stdout` can be mistaken for an answer.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", closefd=True)
    os.dup2(2, 1)
    commands = os.fdopen(0, "r", encoding="utf-8", errors="replace", closefd=False)
    # SIGINT (the host's interrupt: `warden repl`'s Ctrl-C) is a KeyboardInterrupt inside a cell
    # and nothing between cells, where it would end the driver and the session's state with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    figures = _Figures()
    # Figures: a matplotlib backend of warden's, served from here, captures what `plt.show()`
    # shows; what is left open at the end of a cell is captured then (as Jupyter's inline backend).
    inline = _InlineFinder(figures)
    sys.meta_path.append(inline)
    backend = os.environ.get("MPLBACKEND")
    os.environ["MPLBACKEND"] = "module://_warden_inline"
    driver = _Driver(main, baseline, template, answers, figures, inline, backend)
    return driver.serve(commands)


class _Driver:
    """The session driver's state and its answer to each request (`_session`). Reachable from the
    driver's frame only: nothing the program can reach (its namespace, its streams, `display`,
    the inline backend's finder, signal handlers) refers to it, for it holds a template's hook
    functions and the channel to the host."""

    def __init__(self, main, baseline, template, answers, figures, inline, backend):
        self.main, self.baseline, self.template = main, baseline, template
        # The channel to the host: the file, and its framing.
        self.answers, self.channel = answers, _Answers(answers)
        self.figures, self.inline, self.backend = figures, inline, backend
        # What a pooled jail preloaded and how it is hidden; `early`: what a program's end needs,
        # taken in a template before it hid the preloaded modules (matplotlib, threading, atexit,
        # gc).
        self.hide, self.cells, self.before, self.hidden, self.early = None, 0, None, False, None
        self.display = _display_into(figures.shown)
        # What `run_cell` parses, compiles and runs a cell with, taken before any cell runs: a
        # cell that rebinds `ast.parse`, the node classes or a builtin (`import ast; ast.parse =
        # f`) changes nothing the driver compiles next (the runtime layer trusts the code this
        # driver compiles as the cell the host sent, which the static layer judged).
        import ast
        import builtins

        self.compile, self.exec, self.eval = builtins.compile, builtins.exec, builtins.eval
        self.isinstance, self.only_ast = builtins.isinstance, ast.PyCF_ONLY_AST
        self.expr_node, self.expression_node = ast.Expr, ast.Expression

    def send(self, message):
        self.channel.send(message)

    def serve(self, commands):
        """Answers each request until standard input ends (None), or until a `run` request,
        which it returns for `_run` to run."""
        import json
        import os

        operations = {
            "put": _put,
            "list": _list_files,
            "get": _get,
            "preload": self.preload,
            "session": self.begin_session,
        }
        self.send({"ready": True, "pid": os.getpid()})
        for line in commands:
            try:
                request = json.loads(line)
                ident = int(request["id"])
                operation = request.get("op", "execute")
                if operation == "template":
                    self.fork_template(ident)
                    continue
                if operation == "run":
                    if self.start_run(ident, request):
                        return request
                    continue
                if operation in operations:
                    try:
                        answer = operations[operation](request)
                        answer.update(id=ident, status="ok")
                    except Exception as err:
                        answer = {"id": ident, "status": "error", "message": f"{type(err).__name__}: {err}"}
                    self.send(answer)
                    continue
                cell = int(request["count"])
                source = request["code"]
                timeout = float(request.get("timeout_ms", 0)) / 1000.0
                caps = int(request.get("stdout_bytes", 1 << 20)), int(request.get("stderr_bytes", 1 << 20))
            except Exception as err:
                self.send({"protocol_error": f"{type(err).__name__}: {err}"})
                continue
            self.run_cell(ident, cell, source, timeout, caps)
        self.answers.flush()
        return None

    def preload(self, request):
        import sys

        if self.hide is not None or self.cells:
            raise ValueError("preload comes first, once")
        self.before = set(sys.modules)
        failed, self.hide = _preload([str(name) for name in request.get("modules", [])])
        return {"failed": failed, "cpu_ms": int(_cpu_seconds() * 1000)}

    def begin_session(self, request):
        """A pooled jail becomes a session: what the preload loaded is hidden until imported (the
        driver's own modules stay, as in a session started cold)."""
        if self.hide is not None:
            if not self.hidden:
                self.hide(self.before)
            self.hide = None
        return {}

    def begin_run(self, request):
        """A pooled jail runs one program: the jail's streams become the program's as in a cold run
        (standard output the capture pipe, standard input /dev/null), matplotlib's backend and the
        environment are a cold run's, what was preloaded is hidden until imported, and the CPU
        limit counts from now (RLIMIT_CPU, as the jail sets it for a cold run)."""
        import os
        import resource
        import sys

        if self.cells:
            raise ValueError("a session that ran cells cannot run a program")
        source = request["code"]
        if not isinstance(source, str):
            raise ValueError("code must be text")
        cpu_ms = int(request.get("cpu_time_ms", 0))
        used = _cpu_seconds()
        if cpu_ms > 0:
            soft = int(used) + 1 + -(-cpu_ms // 1000)
            _, hard = resource.getrlimit(resource.RLIMIT_CPU)
            new_hard = soft + 1 if hard == resource.RLIM_INFINITY else min(soft + 1, hard)
            resource.setrlimit(resource.RLIMIT_CPU, (min(soft, new_hard), new_hard))
        if self.hide is None:
            _, self.hide = _preload([])
        sys.meta_path.remove(self.inline)
        if self.backend is None:
            os.environ.pop("MPLBACKEND", None)
        else:
            os.environ["MPLBACKEND"] = self.backend
        # What the end of the run needs, taken before the preloaded modules are hidden.
        matplotlib, exits = self.early or _early()
        if exits[2] is not None:
            # What the preload made is never garbage to this run: the collector leaves it alone
            # (its passes, and the one at the end, look at the program's objects only).
            exits[2].freeze()
        return {"cpu_ms": int(used * 1000), "_matplotlib": matplotlib, "_exits": exits}

    def start_run(self, ident, request):
        """The `run` request: answers it; when the run can start, makes the jail's streams the
        program's, hides what a cold program would not find and returns True (`serve` returns the
        request). Imports nothing once the modules are hidden."""
        import os
        import signal

        try:
            answer = self.begin_run(request)
        except Exception as err:
            self.send({"id": ident, "status": "error", "message": f"{type(err).__name__}: {err}"})
            return False
        matplotlib = answer.pop("_matplotlib")
        exits = answer.pop("_exits")
        answer.update(id=ident, status="ok", started=True)
        self.send(answer)
        self.answers.flush()
        # From here on, standard output carries the program's output only.
        os.dup2(self.answers.fileno(), 1)
        self.answers.close()
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        # What a cold program finds in sys.modules at its start, and nothing more.
        self.hide(self.baseline)
        request["_matplotlib"] = matplotlib
        request["_exits"] = exits
        # A program runs with the interpreter's own SIGINT handling, as a cold run does.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return True

    def fork_template(self, ident):
        """The `template` request: this jail becomes a warm pool's template (jail/src/template.rs)
        and serves forks until its channel closes; each run's process, forked and confined,
        returns from here as a fresh session of its own."""
        import os
        import sys

        template = self.template
        if template is None or "serve" not in template or self.cells:
            self.send({"id": ident, "status": "error", "message": "not a template"})
            return
        self.send({"id": ident, "status": "ok"})
        sys.stdout.flush()
        sys.stderr.flush()
        serve, ban_exec, saved = template.pop("serve"), template.pop("ban_exec"), template["saved"]
        self.template = template = None
        import gc

        reseed = _reseed_targets()
        if self.hide is not None:
            # What the preload loaded is hidden once, here: each run forked from the
            # template starts with it hidden until imported, and the pages the hide
            # writes are the template's (a hide in each run copied ~9 MiB of them); a
            # program's start hides the driver's own modules as well.
            self.early = _early()
            self.hide(self.before)
            self.hidden = True
        # Everything the preload made is permanent: no collection in the template or in a
        # run walks it (which would write to, and so copy, every page of it in each run).
        gc.collect()
        gc.freeze()
        del gc
        if not serve(0):
            # The template's channel closed and every run forked from it has ended.
            os._exit(0)
        del serve
        # A run's jail, forked from the template and confined (jail/src/template.rs): its
        # streams are the run's. The answers go to its standard output as in any session.
        os.dup2(1, self.answers.fileno())
        os.dup2(2, 1)
        if ban_exec is not None:
            ban_exec()
        del ban_exec
        # The environment a cold run has (the libraries stay single-threaded).
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _reseed_after_fork(reseed)
        del reseed
        self.send({"ready": True, "pid": os.getpid()})

    def run_cell(self, ident, cell, source, timeout, caps):
        """Runs one cell in the session's namespace and answers with its status, value, displays,
        error and counters (its output went out as it was written)."""
        import linecache
        import resource
        import signal
        import sys
        import time

        if self.hide is not None:
            self.begin_session(None)
        self.cells += 1
        name = f"<cell-{cell}>"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        shown = self.figures.shown
        shown.clear()
        self.main.__dict__.setdefault("display", self.display)
        out = _Stream("stdout", ident, caps[0], self.channel.send)
        err_stream = _Stream("stderr", ident, caps[1], self.channel.send)
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err_stream
        status, result, error = "ok", None, None
        started = time.monotonic()
        try:
            tree = self.compile(source, name, "exec", self.only_ast, dont_inherit=True)
            last = None
            if (
                tree.body
                and self.isinstance(tree.body[-1], self.expr_node)
                and not _silenced(source, tree.body[-1])
            ):
                last = self.expression_node(tree.body.pop().value)
            body = self.compile(tree, name, "exec", dont_inherit=True)
            tail = self.compile(last, name, "eval", dont_inherit=True) if last is not None else None
            if timeout > 0:
                signal.signal(signal.SIGALRM, _on_alarm)
                signal.setitimer(signal.ITIMER_REAL, timeout)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            try:
                self.exec(body, self.main.__dict__)
                value = self.eval(tail, self.main.__dict__) if tail is not None else None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            if value is not None:
                self.main.__dict__["_"] = value
                result = _bundle(value)
        except _CellTimeout as err:
            status, error = "timeout", _error_of(err)
            error["name"] = "KeyboardInterrupt"
        except SystemExit as err:
            status, error = "error", _error_of(err)
        except BaseException as err:
            status, error = "error", _error_of(err)
        finally:
            sys.stdout, sys.stderr = saved
        try:
            self.figures.capture()
        except Exception:
            pass
        self.send({
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


def _early():
    """What a pooled program's end needs (`_exit_fast`), taken while it is in `sys.modules`:
    matplotlib, and threading, atexit and gc."""
    import sys

    return sys.modules.get("matplotlib"), tuple(sys.modules.get(name) for name in ("threading", "atexit", "gc"))


def _cpu_seconds():
    """The CPU time this process used, user and system, in seconds."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --- framing: what the driver writes to the host (docs/sessions.md). The JSON is the wire
# format the host parses (jail/src/session.rs): keys, order and separators stay as they are.


class _Answers:
    """The session's answers to the host: one JSON object a line, ASCII only, without spaces,
    flushed as it is written. Holds the answers' file and nothing else (a cell's streams call
    `send`)."""

    def __init__(self, file):
        self._file = file

    def send(self, message):
        import json

        self._file.write(json.dumps(message, ensure_ascii=True, separators=(",", ":")) + "\n")
        self._file.flush()


# `io` is taken by name here, once: the module's globals hold no module.
class _Stream(__import__("io").TextIOBase):
    """A cell's `sys.stdout` or `sys.stderr`: each write is sent as it happens, up to a cap."""

    def __init__(self, name, cell, cap, send):
        self.name, self.cell, self.cap, self.sent = name, cell, cap, 0
        self._send = send

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
            self._send({"id": self.cell, "stream": self.name, "text": chunk})
        self.sent += len(text)
        return len(text)


class _CellTimeout(KeyboardInterrupt):
    # The name the error's last line has always shown (`…: _session.<locals>.CellTimeout`).
    __qualname__ = "_session.<locals>.CellTimeout"


def _on_alarm(signum, frame):
    """SIGALRM's handler while a cell runs under a time limit (a plain function: a program can read
    the handler back with `signal.getsignal`)."""
    raise _CellTimeout()


def _silenced(source, node):
    """Whether a `;` follows the cell's last expression on its line (comments after it do not
    count), as IPython hides the value then."""
    lines = source.splitlines()
    if node.end_lineno is None or node.end_lineno > len(lines):
        return False
    rest = lines[node.end_lineno - 1].encode("utf-8")[node.end_col_offset:]
    return rest.decode("utf-8", "replace").lstrip().startswith(";")


def _error_of(err):
    """A cell's error as the host reports it: its name, its message, and a traceback of the cell's
    own frames (`Cell In[N], line L` and the line, as IPython prints them) ending in the
    exception's last line."""
    import linecache
    import traceback

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


# --- files: the host's `put`, `list` and `get` in the jail's /work.


def _under_work(path, root="/work"):
    """`/work/<path>` for a relative path the host already checked, or an error."""
    import os

    if not isinstance(path, str) or path.startswith("/") or ".." in path.split("/") or "\0" in path:
        raise ValueError(f"bad path {path!r}")
    return os.path.join(root, path)


def _regular(fd):
    """`fd`, blocking again, when it is a regular file; else closed and refused. Files are opened
    with O_NONBLOCK, so that a FIFO or a device a cell made never holds the driver."""
    import os
    import stat

    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError("not a regular file")
    os.set_blocking(fd, True)
    return fd


def _put(request, root="/work"):
    """Writes a file's bytes, or one piece of them: the host sends a large file in pieces, each at
    its `offset` (0 first: the file is created or emptied; then where the last piece ended)."""
    import base64
    import errno
    import os

    target = _under_work(request["path"], root)
    data = base64.b64decode(request["data"], validate=True)
    offset = int(request.get("offset", 0))
    if offset:
        flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    # Not truncated before it is known to be a regular file.
    try:
        fd = os.open(target, flags, 0o644)
    except OSError as err:
        if err.errno == errno.ENXIO:  # a FIFO nobody reads
            raise ValueError("not a regular file") from None
        raise
    fd = _regular(fd)
    with os.fdopen(fd, "wb") as f:
        if offset:
            size = os.fstat(f.fileno()).st_size
            if size != offset:
                raise ValueError(f"the file has {size} bytes, not the {offset} written so far")
            f.seek(offset)
        else:
            f.truncate(0)
        f.write(data)
    return {"bytes": len(data)}


def _list_files(request, root="/work"):
    import os
    import stat

    found, limit = [], int(request.get("max_files", 10000))
    for top, dirs, names in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(top, name)
            info = os.lstat(full)
            if stat.S_ISREG(info.st_mode):
                found.append({"path": os.path.relpath(full, root), "size": info.st_size})
                if len(found) >= limit:
                    return {"files": found, "truncated": True}
    return {"files": found, "truncated": False}


def _get(request, root="/work"):
    import base64
    import os

    target = _under_work(request["path"], root)
    fd = _regular(os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK))
    with os.fdopen(fd, "rb") as f:
        data = f.read(int(request.get("max_bytes", 1 << 26)) + 1)
    return {"data": base64.b64encode(data).decode("ascii")}


# --- what a cell shows: `display()`, MIME bundles, figures (the inline backend).


def _display_into(shown):
    """The `display` function cells find in their namespace, adding to `shown`; it refers to
    nothing else of the driver's."""

    def display(*objects, **options):
        """IPython's `display()` for cells: each object's MIME bundle joins the cell's display."""
        for value in objects:
            shown.append(_bundle(value))

    return display


class _Figures:
    """What the cell being run shows (`shown`: MIME bundles, in order) and whether a figure was made
    while matplotlib was interactive since the last end of a cell (`drawn`: the inline backend's
    `show._draw_called`; figures made after `plt.ioff()` wait for `plt.show()`)."""

    def __init__(self):
        self.shown = []
        self.drawn = False

    def capture(self, figures=None, everything=False):
        """Captures (and closes) `figures`; else every open figure, which `plt.show()` does
        (`everything`) and the end of a cell does when a figure was made while matplotlib was
        interactive (the inline backend's `flush_figures`)."""
        import sys

        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return
        if figures is None:
            if not everything:
                if not self.drawn:
                    return
                self.drawn = False
            figures = [manager.canvas.figure for manager in pyplot._pylab_helpers.Gcf.get_all_fig_managers()]
        for figure in figures:
            try:
                item = {"text/plain": _plain(figure)}
                png = _png_of(figure)
                if png is not None:
                    item["image/png"] = png
                self.shown.append(item)
            except Exception:
                pass
            pyplot.close(figure)


class _InlineFinder:
    """Finds warden's inline backend, `_warden_inline` (MPLBACKEND names it in a session)."""

    def __init__(self, figures):
        self._figures = figures

    def find_spec(self, name, path=None, target=None):
        if name != "_warden_inline":
            return None
        import importlib.machinery

        return importlib.machinery.ModuleSpec(name, _InlineLoader(self._figures))


class _InlineLoader:
    def __init__(self, figures):
        self._figures = figures

    @staticmethod
    def create_module(spec):
        return None

    def exec_module(self, module):
        """The backend, as matplotlib_inline's: Agg canvases, a figure manager that notes figures
        made in interactive mode, `show` captures; loading it turns interactive mode on, as
        IPython does when it activates the inline backend."""
        import matplotlib
        from matplotlib.backends import backend_agg
        from matplotlib.figure import Figure

        figures = self._figures

        def new_figure_manager(num, *args, FigureClass=Figure, **kwargs):
            return new_figure_manager_given_figure(num, FigureClass(*args, **kwargs))

        def new_figure_manager_given_figure(num, figure):
            manager = backend_agg.new_figure_manager_given_figure(num, figure)
            if matplotlib.is_interactive():
                figures.drawn = True
            return manager

        module.FigureCanvas = backend_agg.FigureCanvasAgg
        module.FigureManager = backend_agg.FigureManager
        module.new_figure_manager = new_figure_manager
        module.new_figure_manager_given_figure = new_figure_manager_given_figure
        module.show = lambda *args, **kwargs: figures.capture(everything=True)
        matplotlib.interactive(True)


def _png_of(figure):
    """The figure as Jupyter's inline backend prints it (IPython's `print_figure`): nothing for an
    empty figure (no axes, no lines), else a PNG at the figure's own dpi and colours, cropped to
    what it draws. Base64."""
    import base64
    import io

    if not figure.axes and not figure.lines:
        return None
    if figure.canvas is None:
        from matplotlib.backend_bases import FigureCanvasBase

        FigureCanvasBase(figure)
    buffer = io.BytesIO()
    figure.canvas.print_figure(
        buffer,
        format="png",
        facecolor=figure.get_facecolor(),
        edgecolor=figure.get_edgecolor(),
        dpi=figure.dpi,
        bbox_inches="tight",
    )
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _notebook_options():
    """pandas decides at import whether it prints for a terminal (`display.max_columns` 0: as many
    columns as fit the terminal) or for a notebook (20, wrapped at `display.width`); in the jail it
    sees no IPython and picks the terminal. A value is shown as in Jupyter, so its bundle is made
    with the notebook's default unless the cell chose another value."""
    import contextlib
    import sys

    pandas = sys.modules.get("pandas")
    try:
        if pandas is not None and pandas.get_option("display.max_columns") == 0:
            return pandas.option_context("display.max_columns", 20)
    except Exception:
        pass
    return contextlib.nullcontext()


def _bundle(value):
    """The MIME bundle of a cell's value, as Jupyter's display formatter makes it: the object's
    `_repr_mimebundle_` first, then `text/plain` (IPython's pretty printer), `text/html`,
    `image/png` (a matplotlib figure, or `_repr_png_`)."""
    import base64
    import sys

    with _notebook_options():
        out = {}
        mimebundle = None if isinstance(value, type) else _real_method(value, "_repr_mimebundle_")
        if mimebundle is not None:
            try:
                data = mimebundle(include=None, exclude=None)
                if isinstance(data, tuple) and len(data) == 2:
                    data = data[0]
                if isinstance(data, dict):
                    out.update((k, v) for k, v in data.items() if isinstance(k, str) and isinstance(v, str))
            except Exception:
                pass
        if "text/plain" not in out or _has_printer(value):
            out["text/plain"] = _plain(value)
        html = None if isinstance(value, type) else _real_method(value, "_repr_html_")
        if html is not None and "text/html" not in out:
            try:
                text = html()
                if isinstance(text, str):
                    out["text/html"] = text
            except Exception:
                pass
        figure_type = getattr(sys.modules.get("matplotlib.figure"), "Figure", None)
        if figure_type is not None and isinstance(value, figure_type):
            out.pop("image/png", None)
            try:
                png = _png_of(value)
                if png is not None:
                    out["image/png"] = png
            except Exception:
                pass
        elif "image/png" not in out:
            png = None if isinstance(value, type) else _real_method(value, "_repr_png_")
            if png is not None:
                try:
                    data = png()
                    if isinstance(data, tuple) and len(data) == 2:
                        data = data[0]
                    if isinstance(data, bytes) and data:
                        out["image/png"] = base64.b64encode(data).decode("ascii")
                except Exception:
                    pass
    return out


def _real_method(value, name):
    """IPython's get_real_method: `value.name` when callable, unless `value` claims every
    attribute (a proxy whose `__getattr__` answers anything)."""
    try:
        if getattr(value, "_ipython_canary_method_should_not_exist_", None) is not None:
            return None
        method = getattr(value, name, None)
    except Exception:
        return None
    return method if callable(method) else None


def _plain(value):
    """`text/plain` of a cell's value: what IPython's displayhook shows."""
    try:
        return _pretty(value)
    except Exception:
        return repr(value)


def _has_printer(value):
    """Whether IPython's text formatter has a printer of its own for `value`'s type (then it wins
    over a `_repr_mimebundle_`'s text)."""
    by_type, by_name = _pretty_printers()
    return any(
        cls in by_type or (_safe_getattr(cls, "__module__"), _safe_getattr(cls, "__name__")) in by_name
        for cls in getattr(type(value), "__mro__", ())
    )


# --- the pretty printer: IPython.lib.pretty as IPython's PlainTextFormatter uses it. Ported from
# IPython 8 (BSD-3-Clause; (c) 2007 Armin Ronacher, portions (c) 2009 Robert Kern, (c) IPython
# Development Team); IPython itself is not in the jail.


def _pretty(value, max_width=79, max_seq_length=1000):
    """IPython.lib.pretty.pretty as IPython's PlainTextFormatter calls it (79 columns, at most 1000
    items per container): the same line-breaking printer and the same printers for builtins, types,
    functions, exceptions, patterns and collections' containers, objects' `_repr_pretty_`, and
    `<module.Class at 0x...>` for objects without a repr of their own."""
    import io

    if type(value) in (int, float, str, bool, complex, bytes):
        return repr(value)  # one line: what IPython's repr printer writes
    by_type, by_name = _pretty_printers()
    stream = io.StringIO()
    printer = _Printer(stream, dict(by_type), dict(by_name), max_width, max_seq_length)
    printer.pretty(value)
    printer.flush()
    return stream.getvalue()


# The printers by type and by (module, name), made on first use (`_pretty_printers`).
_PRETTY_PRINTERS = []


def _pretty_printers():
    """IPython.lib.pretty's printers, by type and by (module, name) (see `_pretty`)."""
    if _PRETTY_PRINTERS:
        return _PRETTY_PRINTERS[0]
    import datetime
    import os
    import re
    import types

    by_type = {
        int: _repr_printer,
        float: _repr_printer,
        str: _repr_printer,
        tuple: _seq_printer("(", ")"),
        list: _seq_printer("[", "]"),
        dict: _dict_printer("{", "}"),
        set: _set_printer("{", "}"),
        frozenset: _set_printer("frozenset({", "})"),
        super: _super_printer,
        type(re.compile("")): _pattern_printer,
        type: _type_printer,
        types.FunctionType: _function_printer,
        types.BuiltinFunctionType: _function_printer,
        types.MethodType: _repr_printer,
        types.SimpleNamespace: _namespace_printer,
        datetime.datetime: _repr_printer,
        datetime.timedelta: _repr_printer,
        BaseException: _exception_printer,
        types.MappingProxyType: _dict_printer("mappingproxy({", "})"),
        slice: _repr_printer,
        range: _repr_printer,
        bytes: _repr_printer,
    }
    if type(os.environ) is not dict:
        by_type[type(os.environ)] = _dict_printer("environ{", "}")
    by_name = {
        ("collections", "defaultdict"): _defaultdict_printer,
        ("collections", "OrderedDict"): _ordereddict_printer,
        ("collections", "deque"): _deque_printer,
        ("collections", "Counter"): _counter_printer,
        ("collections", "UserList"): _userlist_printer,
    }
    _PRETTY_PRINTERS.append((by_type, by_name))
    return _PRETTY_PRINTERS[0]


def _safe_getattr(obj, attr, default=None):
    try:
        return getattr(obj, attr, default)
    except Exception:
        return default


def _repr_printer(obj, p, cycle):
    """IPython's `_repr_pprint`: the object's repr, its lines broken at the printer's indent."""
    lines = repr(obj).splitlines()
    with p.group():
        for idx, line in enumerate(lines):
            if idx:
                p.break_()
            p.text(line)


def _seq_printer(start, end):
    def printer(obj, p, cycle):
        if cycle:
            return p.text(start + "..." + end)
        step = len(start)
        p.begin_group(step, start)
        for idx, x in p._enumerate(obj):
            if idx:
                p.text(",")
                p.breakable()
            p.pretty(x)
        if len(obj) == 1 and isinstance(obj, tuple):
            p.text(",")
        p.end_group(step, end)

    return printer


def _sorted_for_pprint(items):
    items = list(items)
    try:
        return sorted(items)
    except Exception:
        try:
            return sorted(items, key=str)
        except Exception:
            return items


def _set_printer(start, end):
    def printer(obj, p, cycle):
        if cycle:
            return p.text(start + "..." + end)
        if len(obj) == 0:
            p.text(type(obj).__name__ + "()")
        else:
            step = len(start)
            p.begin_group(step, start)
            if not (p.max_seq_length and len(obj) >= p.max_seq_length):
                items = _sorted_for_pprint(obj)
            else:
                items = obj
            for idx, x in p._enumerate(items):
                if idx:
                    p.text(",")
                    p.breakable()
                p.pretty(x)
            p.end_group(step, end)

    return printer


def _dict_printer(start, end):
    def printer(obj, p, cycle):
        if cycle:
            return p.text("{...}")
        step = len(start)
        p.begin_group(step, start)
        for idx, key in p._enumerate(obj.keys()):
            if idx:
                p.text(",")
                p.breakable()
            p.pretty(key)
            p.text(": ")
            p.pretty(obj[key])
        p.end_group(step, end)

    return printer


def _super_printer(obj, p, cycle):
    p.begin_group(8, "<super: ")
    p.pretty(obj.__thisclass__)
    p.text(",")
    p.breakable()
    p.pretty(obj.__self__)
    p.end_group(8, ">")


class _RawText:
    def __init__(self, value):
        self.value = value

    def _repr_pretty_(self, p, cycle):
        p.text(self.value)


class _CallExpression:
    def __init__(self, name, *args, **kwargs):
        self.name, self.args, self.kwargs = name, args, kwargs

    def _repr_pretty_(self, p, cycle):
        started = False

        def new_item():
            nonlocal started
            if started:
                p.text(",")
                p.breakable()
            started = True

        prefix = self.name + "("
        with p.group(len(prefix), prefix, ")"):
            for arg in self.args:
                new_item()
                p.pretty(arg)
            for arg_name, arg in self.kwargs.items():
                new_item()
                arg_prefix = arg_name + "="
                with p.group(len(arg_prefix), arg_prefix):
                    p.pretty(arg)


class _RawStringLiteral:
    def __init__(self, value):
        self.value = value

    def _repr_pretty_(self, p, cycle):
        base = repr(self.value)
        if base[:1] in "uU":
            base, prefix = base[1:], "ur"
        else:
            prefix = "r"
        p.text(prefix + base.replace("\\\\", "\\"))


class _ReFlags:
    def __init__(self, value):
        self.value = value

    def _repr_pretty_(self, p, cycle):
        import re

        done_one = False
        for flag in ("IGNORECASE", "LOCALE", "MULTILINE", "DOTALL", "UNICODE", "VERBOSE", "DEBUG"):
            if self.value & getattr(re, flag):
                if done_one:
                    p.text("|")
                p.text("re." + flag)
                done_one = True


def _pattern_printer(obj, p, cycle):
    if obj.flags:
        p.pretty(_CallExpression("re.compile", _RawStringLiteral(obj.pattern), _ReFlags(obj.flags)))
    else:
        p.pretty(_CallExpression("re.compile", _RawStringLiteral(obj.pattern)))


def _namespace_printer(obj, p, cycle):
    if cycle:
        p.pretty(_CallExpression("namespace", _RawText("...")))
    else:
        p.pretty(_CallExpression("namespace", **obj.__dict__))


def _type_printer(obj, p, cycle):
    if [m for m in type(obj).__mro__ if "__repr__" in vars(m)][:1] != [type]:
        _repr_printer(obj, p, cycle)
        return
    mod = _safe_getattr(obj, "__module__", None)
    try:
        name = obj.__qualname__
        if not isinstance(name, str):
            raise Exception("Try __name__")
    except Exception:
        name = obj.__name__
        if not isinstance(name, str):
            name = "<unknown type>"
    if mod in (None, "__builtin__", "builtins", "exceptions"):
        p.text(name)
    else:
        p.text(mod + "." + name)


def _function_printer(obj, p, cycle):
    import inspect

    name = _safe_getattr(obj, "__qualname__", obj.__name__)
    mod = obj.__module__
    if mod and mod not in ("__builtin__", "builtins", "exceptions"):
        name = mod + "." + name
    try:
        func_def = name + str(inspect.signature(obj))
    except ValueError:
        func_def = name
    p.text("<function %s>" % func_def)


def _exception_printer(obj, p, cycle):
    name = getattr(obj.__class__, "__qualname__", obj.__class__.__name__)
    if obj.__class__.__module__ not in ("exceptions", "builtins"):
        name = "{}.{}".format(obj.__class__.__module__, name)
    p.pretty(_CallExpression(name, *getattr(obj, "args", ())))


def _defaultdict_printer(obj, p, cycle):
    if cycle:
        p.pretty(_CallExpression(obj.__class__.__name__, _RawText("...")))
    else:
        p.pretty(_CallExpression(obj.__class__.__name__, obj.default_factory, dict(obj)))


def _ordereddict_printer(obj, p, cycle):
    if cycle:
        p.pretty(_CallExpression(obj.__class__.__name__, _RawText("...")))
    elif len(obj):
        p.pretty(_CallExpression(obj.__class__.__name__, list(obj.items())))
    else:
        p.pretty(_CallExpression(obj.__class__.__name__))


def _deque_printer(obj, p, cycle):
    if cycle:
        p.pretty(_CallExpression(obj.__class__.__name__, _RawText("...")))
    elif obj.maxlen is not None:
        p.pretty(_CallExpression(obj.__class__.__name__, list(obj), maxlen=obj.maxlen))
    else:
        p.pretty(_CallExpression(obj.__class__.__name__, list(obj)))


def _counter_printer(obj, p, cycle):
    if cycle:
        p.pretty(_CallExpression(obj.__class__.__name__, _RawText("...")))
    elif len(obj):
        p.pretty(_CallExpression(obj.__class__.__name__, dict(obj.most_common())))
    else:
        p.pretty(_CallExpression(obj.__class__.__name__))


def _userlist_printer(obj, p, cycle):
    if cycle:
        p.pretty(_CallExpression(obj.__class__.__name__, _RawText("...")))
    else:
        p.pretty(_CallExpression(obj.__class__.__name__, obj.data))


class _Text:
    def __init__(self):
        self.objs, self.width = [], 0

    def output(self, stream, output_width):
        for obj in self.objs:
            stream.write(obj)
        return output_width + self.width

    def add(self, obj, width):
        self.objs.append(obj)
        self.width += width


class _Breakable:
    def __init__(self, seq, width, printer):
        self.obj, self.width, self.pretty = seq, width, printer
        self.indentation = printer.indentation
        self.group = printer.group_stack[-1]
        self.group.breakables.append(self)

    def output(self, stream, output_width):
        self.group.breakables.popleft()
        if self.group.want_break:
            stream.write("\n")
            stream.write(" " * self.indentation)
            return self.indentation
        if not self.group.breakables:
            self.pretty.group_queue.remove(self.group)
        stream.write(self.obj)
        return output_width + self.width


class _Group:
    def __init__(self, depth, breakables):
        self.depth, self.breakables, self.want_break = depth, breakables, False


class _GroupQueue:
    def __init__(self, *groups):
        self.queue = []
        for group in groups:
            self.enq(group)

    def enq(self, group):
        while group.depth > len(self.queue) - 1:
            self.queue.append([])
        self.queue[group.depth].append(group)

    def deq(self):
        for stack in self.queue:
            for idx, group in enumerate(reversed(stack)):
                if group.breakables:
                    del stack[idx]
                    group.want_break = True
                    return group
            for group in stack:
                group.want_break = True
            del stack[:]

    def remove(self, group):
        try:
            self.queue[group.depth].remove(group)
        except ValueError:
            pass


class _Indented:
    """`with printer.indent(n):` and `with printer.group(...):` (IPython's context managers)."""

    def __init__(self, enter, leave):
        self._enter, self._leave = enter, leave

    def __enter__(self):
        self._enter()

    def __exit__(self, *exc):
        self._leave()
        return False


# The objects printed by their repr whatever their type's printers say (IPython's `_singleton_pprint`).
_SINGLETONS = (None, True, False, Ellipsis, NotImplemented)


class _Printer:
    """IPython.lib.pretty's PrettyPrinter and RepresentationPrinter, as one class (see `_pretty`):
    the `p` an object's `_repr_pretty_` is given."""

    def __init__(self, output, by_type, by_name, max_width, max_seq_length):
        from collections import deque

        self._deque = deque
        self.by_type, self.by_name = by_type, by_name
        self.output, self.max_width, self.newline = output, max_width, "\n"
        self.max_seq_length, self.verbose = max_seq_length, False
        self.output_width = self.buffer_width = self.indentation = 0
        self.buffer = deque()
        root = _Group(0, deque())
        self.group_stack, self.group_queue, self.stack = [root], _GroupQueue(root), []
        self._singletons = {id(x) for x in _SINGLETONS}

    def indent(self, indent):
        def enter():
            self.indentation += indent

        def leave():
            self.indentation -= indent

        return _Indented(enter, leave)

    def group(self, indent=0, open="", close=""):
        return _Indented(lambda: self.begin_group(indent, open), lambda: self.end_group(indent, close))

    def _break_one_group(self, group):
        while group.breakables:
            x = self.buffer.popleft()
            self.output_width = x.output(self.output, self.output_width)
            self.buffer_width -= x.width
        while self.buffer and isinstance(self.buffer[0], _Text):
            x = self.buffer.popleft()
            self.output_width = x.output(self.output, self.output_width)
            self.buffer_width -= x.width

    def _break_outer_groups(self):
        while self.max_width < self.output_width + self.buffer_width:
            group = self.group_queue.deq()
            if not group:
                return
            self._break_one_group(group)

    def text(self, obj):
        width = len(obj)
        if self.buffer:
            text = self.buffer[-1]
            if not isinstance(text, _Text):
                text = _Text()
                self.buffer.append(text)
            text.add(obj, width)
            self.buffer_width += width
            self._break_outer_groups()
        else:
            self.output.write(obj)
            self.output_width += width

    def breakable(self, sep=" "):
        width = len(sep)
        group = self.group_stack[-1]
        if group.want_break:
            self.flush()
            self.output.write(self.newline)
            self.output.write(" " * self.indentation)
            self.output_width = self.indentation
            self.buffer_width = 0
        else:
            self.buffer.append(_Breakable(sep, width, self))
            self.buffer_width += width
            self._break_outer_groups()

    def break_(self):
        group = self.group_queue.deq()
        if group:
            self._break_one_group(group)
        self.flush()
        self.output.write(self.newline)
        self.output.write(" " * self.indentation)
        self.output_width = self.indentation
        self.buffer_width = 0

    def begin_group(self, indent=0, open=""):
        if open:
            self.text(open)
        group = _Group(self.group_stack[-1].depth + 1, self._deque())
        self.group_stack.append(group)
        self.group_queue.enq(group)
        self.indentation += indent

    def _enumerate(self, seq):
        for idx, x in enumerate(seq):
            if self.max_seq_length and idx >= self.max_seq_length:
                self.text(",")
                self.breakable()
                self.text("...")
                return
            yield idx, x

    def end_group(self, dedent=0, close=""):
        self.indentation -= dedent
        group = self.group_stack.pop()
        if not group.breakables:
            self.group_queue.remove(group)
        if close:
            self.text(close)

    def flush(self):
        for data in self.buffer:
            self.output_width += data.output(self.output, self.output_width)
        self.buffer.clear()
        self.buffer_width = 0

    def pretty(self, obj):
        obj_id = id(obj)
        cycle = obj_id in self.stack
        self.stack.append(obj_id)
        self.begin_group()
        try:
            obj_class = _safe_getattr(obj, "__class__", None) or type(obj)
            if obj_id in self._singletons:
                return _repr_printer(obj, self, cycle)
            mro = getattr(obj_class, "__mro__", None) or (obj_class,)
            for cls in mro:
                if cls in self.by_type:
                    return self.by_type[cls](obj, self, cycle)
                key = (_safe_getattr(cls, "__module__", None), _safe_getattr(cls, "__name__", None))
                if key in self.by_name:
                    self.by_type[cls] = self.by_name.pop(key)
                    return self.by_type[cls](obj, self, cycle)
                if "_repr_pretty_" in cls.__dict__:
                    meth = cls._repr_pretty_
                    if callable(meth):
                        return meth(obj, self, cycle)
                if (
                    cls is not object
                    and "__repr__" in cls.__dict__
                    and callable(_safe_getattr(cls, "__repr__", None))
                ):
                    return _repr_printer(obj, self, cycle)
            return self.default(obj, cycle)
        finally:
            self.end_group()
            self.stack.pop()

    def default(self, obj, cycle):
        klass = _safe_getattr(obj, "__class__", None) or type(obj)
        if _safe_getattr(klass, "__repr__", None) is not object.__repr__:
            _repr_printer(obj, self, cycle)
            return
        self.begin_group(1, "<")
        self.pretty(klass)
        self.text(" at 0x%x" % id(obj))
        if cycle:
            self.text(" ...")
        self.end_group(1, ">")


if __name__ == "__main__":
    _run()
