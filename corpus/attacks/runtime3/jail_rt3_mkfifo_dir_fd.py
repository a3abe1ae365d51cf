# warden-case: jail-rt3-mkfifo-dir-fd
# group: JAIL
# technique: os.mkfifo relative to a directory descriptor, outside the write roots
# variant: creator
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: FILE702
import os

base = os.open(".", os.O_RDONLY)
os.mkdir("sub")
os.chdir("sub")
os.mkfifo("../var/" + "warden-rt3-fifo-at", dir_fd=base)
print("made")
