# warden-case: pathlib-write-reports
# group: BENIGN
# technique: pathlib writes inside a sub-directory of the work dir
# expect-static: allow
# expect-output: OK: wrote 3 files in out/
from pathlib import Path

out = Path("out")
out.mkdir(exist_ok=True)
for region, total in {"north": 120, "south": 95, "east": 60}.items():
    (out / f"{region}.txt").write_text(f"{region},{total}\n")

files = sorted(p.name for p in out.glob("*.txt"))
content = (out / "north.txt").read_text().strip()
print(files, content)
print(f"OK: wrote {len(files)} files in {out.name}/")
