# warden-case: e-rt2-compile-via-ast-module
# group: E
# technique: ast.parse then compile of the tree from the program
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
# expect-runtime: DYN401
import ast

tree = ast.parse("print(1)")
code = compile(tree, "<x>", "exec")
