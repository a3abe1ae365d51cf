# warden-case: m-exit-builtin-early
# group: M
# technique: exit() with a non-zero code before any output
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: status error; exit-code 3
rows = [1, 2, 3]
if len(rows) < 10:
    exit(3)
print("total", sum(rows))
