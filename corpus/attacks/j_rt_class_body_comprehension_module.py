# warden-case: j-rt-class-body-comprehension-module
# group: J
# technique: a comprehension in a class body yields the os module; system is called on it
# variant: container
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os


class Box:
    mods = [m for m in (os,)]


Box.mods[0].system("id")
