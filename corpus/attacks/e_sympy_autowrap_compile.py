# warden-case: e-sympy-autowrap-compile
# group: E
# technique: sympy autowrap compiles generated C with the system compiler and loads it
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import sympy as sp
from sympy.utilities.autowrap import autowrap

x = sp.symbols("x")
f = autowrap(x**2, backend="cython")
print(f(3))
