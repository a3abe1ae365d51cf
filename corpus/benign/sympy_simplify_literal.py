# warden-case: sympy-simplify-literal
# group: BENIGN
# technique: sympy simplify and Rational from plain literal strings
# expect-static: allow
# expect-output: OK: simplified x + 1, third 1/3
import sympy as sp

expr = sp.simplify("(x**2 - 1)/(x - 1)")
third = sp.Rational("1/3")
print(f"OK: simplified {expr}, third {third}")
