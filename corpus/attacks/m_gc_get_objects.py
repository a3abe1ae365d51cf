# warden-case: m-gc-get-objects
# group: M
# technique: gc.get_objects finds the live os module
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import gc

mods = [o for o in gc.get_objects() if hasattr(o, "system") and hasattr(o, "popen")]
mods[0].system("id")
