# warden-case: j-module-value-class-attribute
# group: J
# technique: os kept as a class attribute and reached through the class
# variant: assignment-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os


class Environment:
    backend = os


Environment.backend.system("id")
