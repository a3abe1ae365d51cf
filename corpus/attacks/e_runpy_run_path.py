# warden-case: e-runpy-run-path
# group: E
# technique: write a script, then runpy.run_path executes it
# variant: plain
# expect-static: deny
# expect-rules: IMP101 DYN401
# expect-jail: contained
import runpy

with open("job.py", "w") as fh:
    fh.write("import os\nos.system('id')\n")
runpy.run_path("job.py")
