# warden-case: e-rt-sympify-import-string
# group: E
# technique: sympy.sympify of a string that imports subprocess and runs a command
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR301 STR601
# expect-runtime: PROC801
# expect-jail: contained
import sympy
sympy.sympify("__import__('os').popen('id').read()")
