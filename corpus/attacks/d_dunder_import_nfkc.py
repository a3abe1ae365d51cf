# warden-case: d-dunder-import-nfkc
# group: D
# technique: __import__ spelled with fullwidth letters between the underscores
# variant: unicode-lookalike
# references: https://peps.python.org/pep-3131/
# expect-static: deny
# expect-rules: DYN402
# expect-jail: contained
__ｉｍｐｏｒｔ__("os").system("id")
