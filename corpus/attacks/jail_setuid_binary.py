# warden-case: jail-setuid-binary
# group: JAIL
# technique: create a setuid copy of a shell
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: outputs-regular; layer ns:user
import os
import shutil

shutil.copy("/bin/sh", "rootsh")
os.chmod("rootsh", 0o4755)
os.execv("./rootsh", ["rootsh", "-p", "-c", "id"])
