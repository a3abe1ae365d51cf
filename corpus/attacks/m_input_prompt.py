# warden-case: m-input-prompt
# group: M
# technique: input() waits on stdin
# variant: plain
# expect-static: deny
# expect-rules: DYN403
# expect-jail: EOF on stdin; no hang
answer = input("continue? ")
print(answer)
