# warden-case: jail-tar-hardlink-member-overwrite
# group: JAIL
# technique: tarfile.extractall of a hard-link member to the interpreter's os.py followed by a regular member of the same name, which would truncate and rewrite the linked file
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: interpreter-intact
# expect-runtime: FILE702
import io
import tarfile

with tarfile.open("evil.tar", "w") as tar:
    link = tarfile.TarInfo("os.py")
    link.type = tarfile.LNKTYPE
    link.linkname = "/usr/lib/python3.11/os.py"
    tar.addfile(link)
    data = b"raise SystemExit('poisoned')\n"
    member = tarfile.TarInfo("os.py")
    member.size = len(data)
    tar.addfile(member, io.BytesIO(data))
tar = tarfile.open("evil.tar")
tar.errorlevel = 2
tar.extractall("out")
