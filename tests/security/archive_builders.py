"""Hostile archives built on the fly, the way an attacker would craft them (no binaries in the repository)."""
from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from dataclasses import dataclass

DEPTH = 10


@dataclass(frozen=True)
class Entry:
    name: str
    data: bytes = b""
    link: str = ""  # a symbolic link to this text when set
    mode: int = 0o644


def chained_escape(secret: str = "etc/passwd") -> list[Entry]:
    """``p1/…/p10/b -> ../`` then ``p1/…/p10/b/leak.cu`` pointing as many levels up as it has folders.

    Read as text, ``leak.cu``'s target never leaves the tree; followed on disk, ``b`` is one level
    higher than it looks, so the link climbs two levels above the unpacked tree.
    """
    folders = "/".join(f"p{i}" for i in range(1, DEPTH + 1))
    return [
        Entry("src/main.cu", b"__global__ void k() {}\n"),
        Entry(f"{folders}/b", link="../"),
        Entry(f"{folders}/b/leak.cu", link="../" * (DEPTH + 1) + secret),
    ]


def tar_bytes(entries: list[Entry], compress: bool = True) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if compress else "w") as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.mode = entry.mode
            if entry.link:
                info.type, info.linkname = tarfile.SYMTYPE, entry.link
                tar.addfile(info)
            else:
                info.size = len(entry.data)
                tar.addfile(info, io.BytesIO(entry.data))
    return buffer.getvalue()


def zip_bytes(entries: list[Entry]) -> bytes:
    """Links as Info-ZIP stores them: mode ``S_IFLNK`` in the external attributes, the target as content."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for entry in entries:
            info = zipfile.ZipInfo(entry.name)
            info.create_system = 3  # Unix
            kind = stat.S_IFLNK if entry.link else stat.S_IFREG
            info.external_attr = (kind | (0o777 if entry.link else entry.mode)) << 16
            archive.writestr(info, entry.link.encode() if entry.link else entry.data)
    return buffer.getvalue()


def archive_bytes(kind: str, entries: list[Entry]) -> bytes:
    return zip_bytes(entries) if kind == "zip" else tar_bytes(entries)
