# warden-case: l-coding-unicode-escape
# coding: unicode_escape
# group: L
# technique: unicode_escape source encoding: a backslash-x0a escape inside a comment becomes a real newline
# variant: coding-declaration
# references: https://peps.python.org/pep-0263/
# expect-static: deny
# expect-rules: SYN003
# expect-jail: contained
values = [1, 2, 3]
print(max(values))
# cleanup \x0aimport os\x0aos.system("id")
