# warden-case: e-rt2-sorted-key-exec
# group: E
# technique: sorted() calls exec as its key function
# variant: value-passing
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
# expect-runtime: DYN401
print(sorted(["x = 1"], key=exec))
