# warden-case: pyarrow-parquet-roundtrip
# group: BENIGN
# technique: pandas to_parquet / read_parquet through pyarrow, and a pyarrow table
# expect-static: allow
# expect-output: OK: parquet rows 3, columns ['id', 'score'], total 2.25
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

df = pd.DataFrame({"id": [1, 2, 3], "score": [0.5, 0.75, 1.0]})
df.to_parquet("scores.parquet", index=False)
table = pq.read_table("scores.parquet")
back = pd.read_parquet("scores.parquet")
total = pa.compute.sum(table.column("score")).as_py()
print(f"OK: parquet rows {table.num_rows}, columns {back.columns.tolist()}, total {total}")
