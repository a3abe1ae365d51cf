# warden-case: i-to-clipboard
# group: I
# technique: DataFrame.to_clipboard spawns xclip/xsel
# variant: plain
# expect-static: deny
# expect-rules: REF202
# expect-jail: no-survivor
import pandas as pd

df = pd.DataFrame({"a": [1, 2, 3]})
df.to_clipboard()
