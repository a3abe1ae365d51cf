# warden-case: l-lone-cr
# group: L
# technique: lone carriage returns: CPython treats CR as a newline, a LF-only splitter sees one comment line
# variant: other
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
print("report ready")  # see notesimport osos.system("id")
