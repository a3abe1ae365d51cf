# warden-case: i-rt3-symlink-x11-dotdot
# group: I
# technique: /usr/bin/X11 is a link to `.`: /usr/bin/X11/../../etc/shadow is /etc/shadow, lexically /usr/etc/shadow
# variant: symlink
# expect-static: deny
# expect-rules: TODO
# expect-jail: no-read /etc/shadow
# expect-runtime: FILE701
print(open("/usr/bin/X11/../../etc/" + "shadow").read())
