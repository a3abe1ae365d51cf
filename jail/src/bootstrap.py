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
"""


def _run():
    import sys

    program = "/run/warden/main.py"
    lib = "/run/warden/lib"
    flags = sys.argv[1:]

    def fail(what, err):
        sys.stderr.write(f"warden-bootstrap: {what}: {type(err).__name__}: {err}\n")
        sys.stderr.flush()
        import os
        os._exit(125)

    with open(program, encoding="utf-8") as f:
        source = f.read()
    code = compile(source, program, "exec", dont_inherit=True)
    if flags:
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
    try:
        exec(code, main.__dict__)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as err:
        # As the interpreter would print it, without this frame: the traceback starts in the program.
        err.__traceback__ = err.__traceback__.tb_next
        sys.excepthook(type(err), err, err.__traceback__)
        raise SystemExit(1) from None


_run()
