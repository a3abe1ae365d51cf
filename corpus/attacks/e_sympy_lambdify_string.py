# warden-case: e-sympy-lambdify-string
# group: E
# technique: sympy.lambdify pastes a string expression into generated code and execs it
# variant: plain
# expect-static: deny
# expect-rules: STR601
# expect-jail: contained
import sympy as sp

x = sp.symbols("x")
f = sp.lambdify(x, "x + getattr(x, 'real')")
print(f(2))
