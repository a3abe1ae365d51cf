# warden-case: j-subprocess-run
# group: J
# technique: subprocess.run
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import subprocess

out = subprocess.run(["id"], capture_output=True, text=True)
print(out.stdout)
