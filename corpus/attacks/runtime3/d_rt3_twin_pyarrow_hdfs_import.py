# warden-case: d-rt3-twin-pyarrow-hdfs-import
# group: D
# technique: pyarrow._hdfs, the private twin of the denied pyarrow.hdfs, matches the allowed pyarrow.*
# variant: twin
# expect-static: deny
# expect-rules: ATTR302
# expect-jail: contained
# expect-runtime: IMP101
import pyarrow._hdfs as hdfs

print(hdfs)
