# warden-case: l-nfkc-dunder-attribute
# group: L
# technique: dunder attribute names written with fullwidth letters
# variant: unicode-lookalike
# references: https://peps.python.org/pep-3131/
# expect-static: deny
# expect-rules: ATTR301
# expect-jail: contained
for cls in ().__ｃｌａｓｓ__.__ｂａｓｅ__.__ｓｕｂｃｌａｓｓｅｓ__():
    if "wrap_close" in repr(cls):
        cls.__ｉｎｉｔ__.__ｇｌｏｂａｌｓ__["system"]("id")
