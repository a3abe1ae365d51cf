# warden-case: e-sympy-simplify-string
# group: E
# technique: sympy functions sympify string arguments: simplify() of a string that imports os
# variant: plain
# references: CVE-2024-46946
# expect-static: deny
# expect-rules: STR601
# expect-jail: contained
import sympy as sp

print(sp.simplify("__import__('os').system('id')"))
