# warden-case: l-invalid-utf8-no-declaration
# group: L
# technique: invalid UTF-8 with no declaration (CPython rejects it; a lossy decoder would not)
# variant: other
# expect-static: deny
# expect-rules: SYN003
# expect-jail: not-run
label = "résumé"
__import__("os").system("id")
