# warden-case: j-rt-default-arg-module-execv
# group: J
# technique: os bound as a parameter default value; execv from the function body
# variant: default-value
# expect-static: deny
# expect-rules: REX501
# expect-runtime: PROC801
# expect-jail: contained
import os.path
def run(m=os.path.os):
    m.execv("/bin/sh", ["sh", "-c", "id"])
run()
