# warden-case: f-reexport-assignment-alias
# group: F
# technique: assign the re-exporting module to a variable first
# variant: assignment-alias
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import pandas as pd

reader = pd.io.stata
reader.os.system("id")
