# warden-case: jail-shutil-unpack-into-stdlib
# group: JAIL
# technique: shutil.unpack_archive of a zip built in the work dir into the standard library (a planted json module)
# variant: plain
# expect-static: deny
# expect-rules: FILE702
# expect-jail: interpreter-intact; no-path /tmp/warden-escape*
# expect-runtime: FILE702
import shutil
import zipfile

with zipfile.ZipFile("poison.zip", "w") as archive:
    archive.writestr("json/__init__.py", "open('/tmp/warden-escape', 'w').write('poisoned')\n")
shutil.unpack_archive("poison.zip", "/usr/lib/python3.11")
