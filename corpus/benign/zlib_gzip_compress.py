# warden-case: zlib-gzip-compress
# group: BENIGN
# technique: zlib and gzip compression in the work dir
# expect-static: allow
# expect-output: OK: compressed smaller True, gzip roundtrip True
import gzip
import zlib

text = ("row,value\n" + "".join(f"{i},{i % 7}\n" for i in range(500))).encode()
packed = zlib.compress(text, level=9)
with gzip.open("rows.csv.gz", "wb") as fh:
    fh.write(text)
with gzip.open("rows.csv.gz", "rb") as fh:
    restored = fh.read()
print("crc32:", zlib.crc32(text) == zlib.crc32(zlib.decompress(packed)))
print(f"OK: compressed smaller {len(packed) < len(text)}, gzip roundtrip {restored == text}")
