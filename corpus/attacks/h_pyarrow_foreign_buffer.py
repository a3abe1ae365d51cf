# warden-case: h-pyarrow-foreign-buffer
# group: H
# technique: pyarrow.foreign_buffer wraps an arbitrary address as a buffer and reads it
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import pyarrow as pa

buf = pa.foreign_buffer(0x400000, 64)
print(buf.to_pybytes())
