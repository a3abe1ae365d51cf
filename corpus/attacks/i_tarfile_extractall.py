# warden-case: i-tarfile-extractall
# group: I
# technique: tarfile.extractall with ../ members writes outside the work dir (into /tmp, a write root: the run's own private /tmp, never the host's)
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: no-path /tmp/warden-escape*
import io
import tarfile

buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as tar:
    data = b"escaped\n"
    info = tarfile.TarInfo("../../../tmp/warden-escape")
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
buf.seek(0)
tarfile.open(fileobj=buf).extractall(".")
