# warden-case: i-rt3-dir-fd-mkdir-outside
# group: I
# technique: os.mkdir with dir_fd lands outside the write roots
# variant: dir-fd
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-path /usr/warden-rt3-dirfd
# expect-runtime: FILE702
import os

os.mkdir("sub")
os.chdir("sub")
base = os.open("/tmp", os.O_RDONLY)
os.mkdir("../usr/" + "warden-rt3-dirfd", dir_fd=base)
