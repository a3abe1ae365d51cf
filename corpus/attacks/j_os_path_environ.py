# warden-case: j-os-path-environ
# group: J
# technique: import os.path then read os.environ
# variant: import-alias
# expect-static: deny
# expect-rules: IMP101
# expect-jail: env-secret-hidden
import os.path

print(os.path.join("a", "b"))
print(dict(os.environ))
