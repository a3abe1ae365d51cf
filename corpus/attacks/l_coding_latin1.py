# warden-case: l-coding-latin1
# -*- coding: latin-1 -*-
# group: L
# technique: latin-1 declaration: bytes that are not valid UTF-8 (one decoding must be done by warden, not two)
# variant: coding-declaration
# references: https://peps.python.org/pep-0263/
# expect-static: deny
# expect-rules: SYN003
# expect-jail: not-run
label = "résumé des ventes"
print(label)
import os
os.system("id")
