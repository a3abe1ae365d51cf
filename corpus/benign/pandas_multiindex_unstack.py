# warden-case: pandas-multiindex-unstack
# group: BENIGN
# technique: group by two keys and unstack
# expect-static: allow
# expect-output: OK: unstacked columns ['x', 'y']
import pandas as pd

df = pd.DataFrame({
    "store": ["s1", "s1", "s2", "s2", "s1"],
    "kind": ["x", "y", "x", "y", "x"],
    "qty": [1, 2, 3, 4, 5],
})
grouped = df.groupby(["store", "kind"])["qty"].sum()
table = grouped.unstack(fill_value=0)
print(table)
print("s1 x:", int(table.loc["s1", "x"]))
print(f"OK: unstacked columns {list(table.columns)}")
