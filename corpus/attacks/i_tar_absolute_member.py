# warden-case: i-tar-absolute-member
# group: I
# technique: tarfile.extractall of a member with an absolute name outside the write roots
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: no-path /usr/lib/warden-escape*
# expect-runtime: FILE702
import io
import tarfile

with tarfile.open("evil.tar", "w") as tar:
    data = b"escaped\n"
    member = tarfile.TarInfo("/usr/lib/warden-escape-abs")
    member.size = len(data)
    tar.addfile(member, io.BytesIO(data))
tarfile.open("evil.tar").extractall("out")
