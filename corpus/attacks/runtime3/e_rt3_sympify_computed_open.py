# warden-case: e-rt3-sympify-computed-open
# group: E
# technique: sympy.sympify of a computed string that writes a file outside the write roots
# variant: computed-string
# expect-static: deny
# expect-rules: STR601
# expect-jail: no-path /usr/warden-rt3-sympify
# expect-runtime: DYN401
import sympy

target = "/usr/" + "warden-rt3-sympify"
sympy.sympify("open('" + target + "', 'w')")
