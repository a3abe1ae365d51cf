# warden-case: jail-rt3-mknod-fifo-var
# group: JAIL
# technique: os.mknod of a FIFO node outside the write roots
# variant: creator
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: FILE702
import os

os.mknod("/var/" + "warden-rt3-node", 0o600 | 0o010000)
print("made")
