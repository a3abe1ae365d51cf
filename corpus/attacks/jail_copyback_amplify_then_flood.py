# warden-case: jail-copyback-amplify-then-flood
# group: JAIL
# technique: leave 200 sparse files of 60 MiB and a 60 MiB file with 1000 hard links in the work dir, then flood stdout until warden kills the run, so the files written before the kill come back (partial) and would be amplified on the host
# variant: plain
# expect-static: allow
# expect-rules: FILE704
# expect-jail: status output_limit; outputs-regular
from pathlib import Path

for i in range(200):
    with open(f"sparse-{i:03}.bin", "wb") as f:
        f.truncate(60 << 20)
block = bytes(range(256)) * 4096
with open("data.bin", "wb") as f:
    for _ in range(60):
        f.write(block)
for i in range(1000):
    Path(f"link-{i:04}.bin").hardlink_to("data.bin")
line = "A" * 65536
while True:
    print(line)
