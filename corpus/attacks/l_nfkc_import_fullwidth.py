# warden-case: l-nfkc-import-fullwidth
# group: L
# technique: import of a module spelled in fullwidth letters (NFKC-normalised to os)
# variant: unicode-lookalike
# references: https://peps.python.org/pep-3131/
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
import ｏｓ
ｏｓ.system("id")
