# warden-case: uuid-deterministic
# group: BENIGN
# technique: uuid5 namespace ids are deterministic
# expect-static: allow
# expect-output: OK: uuid5 886313e1-3b8a-5372-9b90-0c9aee199e5d
import uuid

ident = uuid.uuid5(uuid.NAMESPACE_DNS, "python.org")
again = uuid.uuid5(uuid.NAMESPACE_DNS, "python.org")
print("stable:", ident == again, "version:", ident.version)
print(f"OK: uuid5 {ident}")
