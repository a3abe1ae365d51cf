# warden-case: a-base-assignment-alias
# group: A
# technique: split the __base__ walk over several assignments so no single expression looks suspicious
# variant: assignment-alias
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
kind = type(())
root = kind.__base__
listing = root.__subclasses__
for cls in listing():
    init = cls.__init__
    env = getattr(init, "__globals__", {})
    if "system" in env:
        env["system"]("id")
        break
