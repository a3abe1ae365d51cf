# warden-case: e-sympy-sympify
# group: E
# technique: sympy.sympify evaluates its string argument
# variant: other
# references: CVE-2024-46946
# expect-static: deny
# expect-rules: IMP101 STR601
# expect-jail: contained
import sympy

sympy.sympify("__import__('os').system('id')")
