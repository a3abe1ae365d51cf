# warden-case: d-rt-sympy-external-import
# group: D
# technique: sympy.core.cache re-exports importlib.import_module; the program imports runpy through it
# variant: other
# expect-static: deny
# expect-rules: ATTR304
# expect-runtime: IMP101
# expect-jail: contained
import sympy.core.cache as cache
runner = getattr(cache, "import_" + "module")("runpy")
runner.run_path("/work/x.py")
