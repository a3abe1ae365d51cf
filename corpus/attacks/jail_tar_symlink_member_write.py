# warden-case: jail-tar-symlink-member-write
# group: JAIL
# technique: tarfile.extractall of an archive with a symlink member to the standard library and a regular member written through it
# variant: symlink
# expect-static: allow
# expect-rules: none
# expect-jail: interpreter-intact; no-path /usr/lib/python3.11/warden-escape*
# expect-runtime: FILE702
import io
import tarfile

with tarfile.open("evil.tar", "w") as tar:
    link = tarfile.TarInfo("lib")
    link.type = tarfile.SYMTYPE
    link.linkname = "/usr/lib/python3.11"
    tar.addfile(link)
    data = b"open('/tmp/warden-escape', 'w').write('poisoned')\n"
    member = tarfile.TarInfo("lib/warden-escape-tar.py")
    member.size = len(data)
    tar.addfile(member, io.BytesIO(data))
tarfile.open("evil.tar").extractall("out")
