# warden-case: e-sympy-parse-expr-submodule
# group: E
# technique: sympy.parsing.sympy_parser.parse_expr imported from its submodule
# variant: import-alias
# references: CVE-2024-46946
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
from sympy.parsing.sympy_parser import parse_expr as pe

print(pe("__import__('os').system('id')"))
