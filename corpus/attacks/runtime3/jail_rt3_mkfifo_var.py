# warden-case: jail-rt3-mkfifo-var
# group: JAIL
# technique: os.mkfifo outside the write roots (no audit event in 3.11)
# variant: creator
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: FILE702
import os

os.mkfifo("/var/" + "warden-rt3-fifo")
print("made")
