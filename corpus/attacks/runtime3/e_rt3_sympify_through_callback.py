# warden-case: e-rt3-sympify-through-callback
# group: E
# technique: a computed string evaluated by sympify run as a callback of Series.map (the library, not the program, calls the evaluator)
# variant: callback
# expect-static: deny
# expect-rules: STR601
# expect-jail: contained
# expect-runtime: DYN401
import pandas as pd
import sympy

name = "".join(["PW", "NED"])
pd.Series(["open('/work/" + name + "', 'w')"]).map(sympy.sympify)
