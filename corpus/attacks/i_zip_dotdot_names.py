# warden-case: i-zip-dotdot-names
# group: I
# technique: zipfile.extractall of members named with ../ and an absolute path outside the write roots (zipfile cleans the names: they land in the work dir)
# variant: other
# expect-static: allow
# expect-rules: none
# expect-jail: no-path /usr/lib/warden-escape*; outputs-regular
import zipfile

with zipfile.ZipFile("evil.zip", "w") as archive:
    archive.writestr("../../../../../usr/lib/warden-escape-zip", "escaped\n")
    archive.writestr("/usr/lib/warden-escape-zipabs", "escaped\n")
zipfile.ZipFile("evil.zip").extractall("out")
