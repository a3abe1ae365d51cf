# warden-case: i-rt3-dir-fd-relative-read
# group: I
# technique: os.open with dir_fd: the path is relative to the descriptor, not to the working directory
# variant: dir-fd
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
# expect-runtime: FILE701
import os

os.mkdir("sub")
os.chdir("sub")
base = os.open("/tmp", os.O_RDONLY)
fd = os.open("../etc/" + "passwd", os.O_RDONLY, dir_fd=base)
print(os.read(fd, 4096))
