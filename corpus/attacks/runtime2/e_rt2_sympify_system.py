# warden-case: e-rt2-sympify-system
# group: E
# technique: sympy.sympify evaluates a string that imports os and runs a command
# variant: computed-string
# expect-static: deny
# expect-rules: STR601 ATTR301
# expect-jail: contained
# expect-runtime: PROC801
import sympy

sympy.sympify("__import__('os').system('id')")
