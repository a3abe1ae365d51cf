# warden-case: j-pyarrow-fs-s3
# group: J
# technique: a pyarrow S3 filesystem pointed at a loopback endpoint
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect tcp4:127.0.0.1:5758
from pyarrow import fs

s3 = fs.S3FileSystem(endpoint_override="http://127.0.0.1:5758", anonymous=True, request_timeout=2, connect_timeout=2)
print(s3.get_file_info("bucket/key"))
