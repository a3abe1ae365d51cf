#!/usr/bin/env python3
"""Builds the client's wheel from the checkout with the standard library alone, writing nothing into
the source tree: `warden_client-<version>-py3-none-any.whl` in `--out` (default:
`<repo>/target/python-wheels`, beside Rust's build output). Prints the wheel's path on its last line.

    python3 clients/python/build_wheel.py [--out DIR]
    pip install "$(python3 clients/python/build_wheel.py | tail -n 1)"            # or [smolagents] etc.

The metadata comes from pyproject.toml (name, version, description, readme, requires-python,
license, dependencies, optional dependencies); the files are the `warden_client` package's `.py`
files and its `py.typed` marker (PEP 561: the package's type hints are for its users' checkers).
The archive is reproducible: fixed timestamps and file order, so the same sources give the
same bytes. No build backend, pip or network is needed, and no `build/` or `*.egg-info` appears in
the checkout (which `pip install ./clients/python` with a setuptools backend used to leave).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import List, Tuple

import tomllib

HERE = Path(__file__).resolve().parent
PACKAGE = "warden_client"
#: Zip entries' timestamp (the earliest a zip can hold), for reproducible wheels.
EPOCH = (1980, 1, 1, 0, 0, 0)


def _metadata(project: dict) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    license_ = project.get("license")
    if isinstance(license_, dict) and license_.get("text"):
        lines.append(f"License: {license_['text']}")
    elif isinstance(license_, str):
        lines.append(f"License-Expression: {license_}")
    for requirement in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {requirement}")
    for extra, requirements in sorted(project.get("optional-dependencies", {}).items()):
        lines.append(f"Provides-Extra: {extra}")
        for requirement in requirements:
            lines.append(f'Requires-Dist: {requirement}; extra == "{extra}"')
    readme = project.get("readme")
    body = ""
    if isinstance(readme, str):
        lines.append("Description-Content-Type: text/markdown")
        body = (HERE / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + body


def _files() -> List[Tuple[str, bytes]]:
    """The package's Python files and its `py.typed`, by their path in the wheel, sorted."""
    files = []
    for path in sorted((HERE / PACKAGE).rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        if path.suffix != ".py" and path.name != "py.typed":
            continue
        files.append((path.relative_to(HERE).as_posix(), path.read_bytes()))
    return files


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def build(out: Path) -> Path:
    project = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name = project["name"].replace("-", "_")
    version = project["version"]
    dist_info = f"{name}-{version}.dist-info"
    entries = _files()
    entries.append((f"{dist_info}/METADATA", _metadata(project).encode("utf-8")))
    entries.append((
        f"{dist_info}/WHEEL",
        b"Wheel-Version: 1.0\nGenerator: warden clients/python/build_wheel.py\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    ))
    record = "".join(f"{path},{_digest(data)},{len(data)}\n" for path, data in entries)
    record += f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode("utf-8")))

    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    # Written beside, then renamed: a reader never sees half a wheel.
    fd, partial = tempfile.mkstemp(prefix=".wheel-", dir=out)
    os.close(fd)
    try:
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path, data in entries:
                info = zipfile.ZipInfo(path, date_time=EPOCH)
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data)
        os.chmod(partial, 0o644)
        os.replace(partial, wheel)
    except BaseException:
        os.unlink(partial)
        raise
    return wheel


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE.parent.parent / "target" / "python-wheels",
                        help="where the wheel is written (default: <repo>/target/python-wheels)")
    args = parser.parse_args()
    wheel = build(args.out.resolve())
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
