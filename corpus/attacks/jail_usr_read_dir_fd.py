# warden-case: jail-usr-read-dir-fd
# group: JAIL
# technique: open a host file under /usr relative to a directory descriptor (dir_fd), which a check of the path's text against the working directory misjudges; only Landlock's read roots hold it
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-read /usr/lib/os-release
import os

usr = os.open("/usr", os.O_PATH | os.O_DIRECTORY)
fd = os.open("lib/os-release", os.O_RDONLY, dir_fd=usr)
print(os.read(fd, 4096).decode())
