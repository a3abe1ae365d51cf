# warden-case: i-fileinput-read
# group: I
# technique: fileinput.input over host files
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: canary-unread; no-read /etc/shadow
import fileinput

for line in fileinput.input(files=["/etc/shadow"]):
    print(line, end="")
