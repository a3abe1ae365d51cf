# warden-case: l-coding-utf7-hidden-import
# -*- coding: utf-7 -*-
# group: L
# technique: PEP 263 utf-7 declaration: the encoded sequence AAo in a comment decodes to a newline, so CPython runs code a UTF-8 parser sees as a comment
# variant: coding-declaration
# references: https://peps.python.org/pep-0263/
# expect-static: deny
# expect-rules: SYN003
# expect-jail: contained
totals = [3, 4, 5]
print("total", sum(totals))
# +AAo-import os+AAo-os.system(+ACI-id+ACI-)
