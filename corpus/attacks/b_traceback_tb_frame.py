# warden-case: b-traceback-tb-frame
# group: B
# technique: exception __traceback__.tb_frame.f_globals gives the module namespace
# variant: plain
# expect-static: deny
# expect-rules: ATTR301 ATTR303
# expect-jail: contained
try:
    1 / 0
except ZeroDivisionError as exc:
    frame = exc.__traceback__.tb_frame

frame.f_globals["__builtins__"].exec("import os; os.system('id')")
