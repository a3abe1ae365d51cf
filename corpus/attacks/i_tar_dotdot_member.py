# warden-case: i-tar-dotdot-member
# group: I
# technique: tarfile.extractall of a member whose name climbs out of the work dir with ..
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: no-path /usr/lib/warden-escape*
# expect-runtime: FILE702
import io
import tarfile

with tarfile.open("evil.tar", "w") as tar:
    data = b"escaped\n"
    member = tarfile.TarInfo("../../../../../usr/lib/warden-escape-dots")
    member.size = len(data)
    tar.addfile(member, io.BytesIO(data))
tarfile.open("evil.tar").extractall("out")
