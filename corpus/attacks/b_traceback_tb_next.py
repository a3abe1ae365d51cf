# warden-case: b-traceback-tb-next
# group: B
# technique: walk tb_next into the frame of a helper and read its f_builtins
# variant: plain
# expect-static: deny
# expect-rules: ATTR301 ATTR303
# expect-jail: contained
def fail():
    raise ValueError("bad row")

try:
    fail()
except ValueError as exc:
    inner = exc.__traceback__.tb_next.tb_frame

inner.f_builtins["eval"]("__import__('os').system('id')")
