# warden-case: f-reexport-submodule-import-alias
# group: F
# technique: import the re-exporting submodule under an alias
# variant: import-alias
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import pandas.io.stata as stata

stata.os.system("id")
