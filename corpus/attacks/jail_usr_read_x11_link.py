# warden-case: jail-usr-read-x11-link
# group: JAIL
# technique: read a host file under /usr that no library needs, through the /usr/bin/X11 -> . link (the text stays under /usr, the real path leaves the interpreter's tree); only Landlock's read roots hold it
# variant: computed-string
# expect-static: allow
# expect-rules: none
# expect-jail: no-read /usr/lib/os-release
parts = ["", "usr", "bin", "X11", "..", "..", "usr", "lib", "os-release"]
path = "/".join(parts)
with open(path) as fh:
    print(fh.read())
