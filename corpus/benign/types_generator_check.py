# warden-case: types-generator-check
# group: BENIGN
# technique: isinstance checks against types.GeneratorType and FunctionType-free types
# expect-static: allow
# expect-output: OK: generator=True builtin=True
import types


def numbers():
    yield from range(3)


gen = numbers()
is_gen = isinstance(gen, types.GeneratorType)
is_builtin = isinstance(len, types.BuiltinFunctionType)
print(f"OK: generator={is_gen} builtin={is_builtin} (sum {sum(gen)})")
