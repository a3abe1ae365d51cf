# warden-case: l-coding-raw-unicode-escape
# coding: raw_unicode_escape
# group: L
# technique: raw_unicode_escape source encoding: a backslash-u000a escape inside a comment becomes a newline
# variant: coding-declaration
# references: https://peps.python.org/pep-0263/
# expect-static: deny
# expect-rules: SYN003
# expect-jail: contained
names = ["x", "y"]
print(len(names))
# todo \u000aimport os\u000aos.system("id")
