# warden-case: jail-tar-device-member
# group: JAIL
# technique: tarfile.extractall of a character-device member (/dev/mem's numbers) into the work dir, then read it
# variant: creator
# expect-static: allow
# expect-rules: none
# expect-jail: outputs-regular
# expect-runtime: FILE702
import tarfile

with tarfile.open("evil.tar", "w") as tar:
    device = tarfile.TarInfo("mem")
    device.type = tarfile.CHRTYPE
    device.devmajor, device.devminor = 1, 1
    tar.addfile(device)
tar = tarfile.open("evil.tar")
tar.errorlevel = 2
tar.extractall("out")
print(open("out/mem", "rb").read(64))
