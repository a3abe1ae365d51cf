# warden-case: files-archive-roundtrip
# group: BENIGN
# technique: write CSV files, copy and move them with shutil, pack them as tar.gz and zip, unpack both, compare, clean up a temporary directory
# expect-static: allow
# expect-output: OK: 3 files, 2 archives, rows 6
import csv
import os
import shutil
import tarfile
import tempfile
import zipfile

os.makedirs("raw", exist_ok=True)
for name, rows in [("a", 1), ("b", 2), ("c", 3)]:
    with open(os.path.join("raw", name + ".csv"), "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "value"])
        for i in range(rows):
            writer.writerow([i, i * 10])
shutil.copytree("raw", "staged")
shutil.move("staged/c.csv", "staged/c_moved.csv")
shutil.make_archive("bundle", "gztar", root_dir="staged")
with zipfile.ZipFile("bundle.zip", "w", zipfile.ZIP_DEFLATED) as archive:
    for name in sorted(os.listdir("staged")):
        archive.write(os.path.join("staged", name), name)
with tempfile.TemporaryDirectory() as scratch:
    with tarfile.open("bundle.tar.gz") as tar:
        tar.extractall(os.path.join(scratch, "tar"))
    with zipfile.ZipFile("bundle.zip") as archive:
        archive.extractall(os.path.join(scratch, "zip"))
    tar_names = sorted(n for n in os.listdir(os.path.join(scratch, "tar")) if n.endswith(".csv"))
    zip_names = sorted(os.listdir(os.path.join(scratch, "zip")))
    assert tar_names == zip_names, (tar_names, zip_names)
    rows = 0
    for name in zip_names:
        with open(os.path.join(scratch, "zip", name)) as handle:
            rows += sum(1 for _ in handle) - 1
shutil.rmtree("staged")
assert not os.path.exists("staged")
print(f"OK: {len(zip_names)} files, 2 archives, rows {rows}")
