# warden-case: f-reexport-getattr-literal
# group: F
# technique: getattr(pd.io.stata, 'os') with a literal name
# variant: other
# expect-static: deny
# expect-rules: REX501
# expect-jail: contained
import pandas as pd

getattr(pd.io.stata, "os").system("id")
