# warden-case: b-rt-traceback-frame-walk
# group: B
# technique: a traceback's frame, then its globals' builtins
# variant: plain
# expect-static: deny
# expect-rules: ATTR301 ATTR303
# expect-jail: contained
# expect-runtime: ATTR303
try:
    raise ValueError("x")
except ValueError as err:
    frame = err.__traceback__.tb_frame
    print(frame.f_globals["__builtins__"])
