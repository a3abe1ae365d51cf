# warden-case: jail-tiocsti-inject
# group: JAIL
# technique: TIOCSTI ioctl pushes characters into the controlling terminal
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained; layer seccomp
import fcntl
import termios

for ch in "id\n":
    fcntl.ioctl(0, termios.TIOCSTI, ch.encode())
