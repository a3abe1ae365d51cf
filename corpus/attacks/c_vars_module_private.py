# warden-case: c-vars-module-private
# group: C
# technique: vars(module) exposes the private _os re-export as a dict item
# variant: container
# expect-static: deny
# expect-rules: DYN403
# expect-jail: contained
import random

ns = vars(random)
ns["_os"].system("id")
