# warden-case: c-rt2-match-keyword-system
# group: C
# technique: a match class pattern binds os.system as a keyword attribute
# variant: match-pattern
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: PROC801
import os

match os:
    case object(system=run):
        run("id")
