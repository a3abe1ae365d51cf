# warden-case: d-session-plant-module-then-import
# group: D
# technique: a session writes a Python module into the work dir, then imports it in a later cell so its top level runs
# variant: other
# session: cells
# expect-static: deny
# expect-rules: IMP101
# expect-runtime: IMP101
# expect-jail: contained
# %% plant
with open("warden_planted.py", "w") as handle:
    handle.write("import os\nos.system('id > /work/warden-escape-planted')\n")
# %% load
import warden_planted
