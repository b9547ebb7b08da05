"""Tiny wheels and a source archive written by the tests, for a local package index."""
from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path


def make_wheel(directory: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    dist = f"{name.replace('-', '_')}-{version}"
    files = {
        f"{dist}.dist-info/METADATA": "Metadata-Version: 2.1\nName: {}\nVersion: {}\n{}".format(
            name, version, "".join(f"Requires-Dist: {r}\n" for r in requires)),
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{name.replace('-', '_')}/__init__.py": "",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}.dist-info/RECORD,,")
    files[f"{dist}.dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = directory / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def make_sdist(directory: Path, name: str, version: str) -> Path:
    sdist = directory / f"{name.replace('-', '_')}-{version}.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        data = b"raise SystemExit('setup code must never run')\n"
        info = tarfile.TarInfo(f"{name.replace('-', '_')}-{version}/setup.py")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return sdist
