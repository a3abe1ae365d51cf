# warden-case: j-os-environ-secrets
# group: J
# technique: dump os.environ
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: env-secret-hidden
import os

for key, value in os.environ.items():
    print(key, value)
