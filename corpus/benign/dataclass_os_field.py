# warden-case: dataclass-os-field
# group: BENIGN
# technique: a dataclass with fields os and sys read by attribute
# expect-static: allow
# expect-output: OK: 2 devices on linux
from dataclasses import dataclass


@dataclass
class Device:
    name: str
    os: str
    sys: str


devices = [Device("n1", "linux", "x86"), Device("n2", "linux", "arm"), Device("n3", "bsd", "x86")]
on_linux = [d for d in devices if d.os == "linux"]
print(f"OK: {len(on_linux)} devices on linux ({on_linux[0].sys})")
