# warden-case: time-strftime-fixed
# group: BENIGN
# technique: time module with a fixed timestamp
# expect-static: allow
# expect-output: OK: epoch 86400 is 1970-01-02 00:00:00 UTC
import time

stamp = 86400
utc = time.gmtime(stamp)
text = time.strftime("%Y-%m-%d %H:%M:%S", utc)
start = time.perf_counter()
total = sum(range(1000))
elapsed = time.perf_counter() - start
print("elapsed non-negative:", elapsed >= 0, "total:", total)
print(f"OK: epoch {stamp} is {text} UTC")
