# warden-case: jail-usr-read-llvm-release-link
# group: JAIL
# technique: follow a link that points up (/usr/lib/llvm-*/build/Release -> ..) to a host file under /usr that no library needs; only Landlock's read roots hold it
# variant: computed-string
# expect-static: allow
# expect-rules: none
# expect-jail: no-read /usr/lib/os-release
import os

base = "/".join(["", "usr", "lib"])
paths = [base + "/" + name + "/build/Release/../os-release" for name in sorted(os.listdir(base)) if name.startswith("llvm-")]
for path in paths + [base + "/os-release"]:
    try:
        with open(path) as fh:
            print(path, fh.read())
    except OSError as err:
        print(path, type(err).__name__)
