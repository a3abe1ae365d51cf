# warden-case: e-rt3-patsy-source-name-library-file
# group: E
# technique: patsy evaluates a computed string under a library file's name (source_name)
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR301 REF201
# expect-jail: contained
# expect-runtime: IMP101
import numpy as np
import patsy

env = patsy.EvalEnvironment.capture()
print(env.eval("__import__('" + "tel" + "netlib')", source_name=np.__file__))
