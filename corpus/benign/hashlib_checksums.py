# warden-case: hashlib-checksums
# group: BENIGN
# technique: sha256/md5 checksums of files in the work dir
# expect-static: allow
# expect-output: OK: sha256 of 'hello' 2cf24dba5fb0a30e
import hashlib

with open("payload.txt", "wb") as fh:
    fh.write(b"hello")

h = hashlib.sha256()
with open("payload.txt", "rb") as fh:
    for chunk in iter(lambda: fh.read(4096), b""):
        h.update(chunk)
digest = h.hexdigest()
print("md5:", hashlib.md5(b"hello").hexdigest())
print(f"OK: sha256 of 'hello' {digest[:16]}")
