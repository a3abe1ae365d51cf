# warden-case: b-rt2-generator-frame-getattr
# group: B
# technique: a generator's gi_frame read through getattr with a built name
# variant: computed-string
# expect-static: deny
# expect-rules: ATTR304 ATTR303
# expect-jail: contained
# expect-runtime: ATTR303
def gen():
    yield 1


g = gen()
print(getattr(g, "gi_" + "frame").f_globals)
