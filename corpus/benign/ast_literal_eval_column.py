# warden-case: ast-literal-eval-column
# group: BENIGN
# technique: ast.literal_eval turns a column of list strings back into lists
# expect-static: allow
# expect-output: OK: 6 tags in total
import ast

import pandas as pd

df = pd.DataFrame({"id": [1, 2, 3], "tags": ["['a', 'b']", "['c']", "['d', 'e', 'f']"]})
df["tags"] = df["tags"].apply(ast.literal_eval)
print(f"OK: {df['tags'].str.len().sum()} tags in total")
