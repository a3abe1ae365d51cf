# warden-case: f-random-private-os-alias
# group: F
# technique: random._os through an import alias and assignment aliases
# variant: assignment-alias
# expect-static: deny
# expect-rules: ATTR302
# expect-jail: contained
import random as rnd

helper = rnd._os
run = helper.system
run("id")
