# warden-case: pandas-explode-lists
# group: BENIGN
# technique: explode list column
# expect-static: allow
# expect-output: OK: exploded to 6 rows, 4 unique tags
import pandas as pd

posts = pd.DataFrame({"post": [1, 2, 3], "tags": [["py", "data"], ["py"], ["ml", "data", "viz"]]})
flat = posts.explode("tags")
print(flat)
print(flat["tags"].value_counts())
print(f"OK: exploded to {len(flat)} rows, {flat['tags'].nunique()} unique tags")
