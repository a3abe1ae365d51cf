# warden-case: j-rt-loop-target-module-system
# group: J
# technique: the os module as a loop target, then system called on it
# variant: container
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os

for mod in [os]:
    mod.system("id")
