# warden-case: base64-roundtrip
# group: BENIGN
# technique: base64 encode/decode
# expect-static: allow
# expect-output: OK: base64 aGVsbG8gd2FyZGVu roundtrip True
import base64

raw = b"hello warden"
enc = base64.b64encode(raw)
url = base64.urlsafe_b64encode(b"\xfb\xff").decode()
back = base64.b64decode(enc)
print("urlsafe:", url)
print(f"OK: base64 {enc.decode()[:16]} roundtrip {back == raw}")
