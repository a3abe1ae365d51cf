# warden-case: jail-rt3-mknod-fifo-dev-shm
# group: JAIL
# technique: os.mknod of a FIFO node outside the write roots
# variant: creator
# expect-static: deny
# expect-rules: TODO
# expect-jail: contained
# expect-runtime: FILE702
import os

os.mknod("/dev/shm/" + "warden-rt3-node", 0o600 | 0o010000)
print("made")
