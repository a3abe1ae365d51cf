# warden-case: jail-copyback-sparse-hardlinks
# group: JAIL
# technique: shape the 64 MiB work dir as 200 sparse files of 60 MiB and a 60 MiB file with 1000 hard links (72 GB read back), so copying the work dir back would write it all on the host's disk
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
print("200 sparse files of 60 MiB, 1000 names of one 60 MiB file")
