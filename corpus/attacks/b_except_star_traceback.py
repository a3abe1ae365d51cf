# warden-case: b-except-star-traceback
# group: B
# technique: except* handler reaches the traceback frame of the exception group
# variant: plain
# references: CVE-2025-22153
# expect-static: deny
# expect-rules: ATTR301 ATTR303
# expect-jail: contained
try:
    raise ExceptionGroup("batch", [ValueError("bad row")])
except* ValueError as group:
    frame = group.__traceback__.tb_frame

frame.f_globals["__builtins__"].exec("import os; os.system('id')")
