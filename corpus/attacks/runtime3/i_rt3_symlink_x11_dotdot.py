# warden-case: i-rt3-symlink-x11-dotdot
# group: I
# technique: /usr/bin/X11 is a link to `.`: /usr/bin/X11/../../etc/passwd is /etc/passwd, lexically /usr/etc/passwd
# variant: symlink
# expect-static: deny
# expect-rules: FILE701
# expect-jail: contained
# expect-runtime: FILE701
print(open("/usr/bin/X11/../../etc/" + "passwd").read())
