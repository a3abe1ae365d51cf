# warden-case: e-patsy-eval-environment
# group: E
# technique: patsy.EvalEnvironment.capture().eval runs Python source in the caller's frame
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import patsy

env = patsy.EvalEnvironment.capture()
print(env.eval("__import__('os').system('id')"))
