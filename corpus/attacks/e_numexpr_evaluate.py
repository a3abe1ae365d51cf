# warden-case: e-numexpr-evaluate
# group: E
# technique: numexpr.evaluate on old versions falls back to eval
# variant: other
# references: CVE-2023-39631
# expect-static: deny
# expect-rules: IMP101 STR601
# expect-jail: contained
import numexpr

numexpr.evaluate("__import__('os').system('id')")
