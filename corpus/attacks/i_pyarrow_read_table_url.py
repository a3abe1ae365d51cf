# warden-case: i-pyarrow-read-table-url
# group: I
# technique: pyarrow.parquet.read_table given an s3:// URL
# variant: plain
# expect-static: deny
# expect-rules: FILE703
# expect-jail: contained; layer ns:net
import pyarrow.parquet as pq

table = pq.read_table("s3://warden-canary-bucket/data.parquet")
print(table.num_rows)
