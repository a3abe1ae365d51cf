# warden-case: e-with-item-exec
# group: E
# technique: exec in a with item
# variant: other
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
with exec("import os; os.system('id')") or open("notes.txt", "w") as fh:
    fh.write("done")
