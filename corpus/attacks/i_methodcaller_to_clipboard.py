# warden-case: i-methodcaller-to-clipboard
# group: I
# technique: DataFrame.to_clipboard called through operator.methodcaller, so no attribute node names it
# variant: computed-string
# expect-static: deny
# expect-rules: REF202
# expect-jail: no-survivor
import operator

import pandas as pd

copy = operator.methodcaller("to_clipboard")
copy(pd.DataFrame({"a": [1, 2, 3]}))
