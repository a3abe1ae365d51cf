# warden-case: j-module-value-default-argument
# group: J
# technique: os bound to a parameter through its default value, then system called on the parameter
# variant: default-value
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os


def run(command, lib=os):
    return lib.system(command)


run("id")
