# warden-case: m-input-prompt
# group: M
# technique: input() waits on stdin
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: status error
answer = input("continue? ")
print(answer)
