"""Safe unpacking of uploaded .zip / .tar / .tar.gz / .tgz archives.

Every member is checked before anything is written: absolute paths, ``..`` components, links
pointing outside the destination, device files and FIFOs are rejected, as are archives over the
file-count limit. Sizes are enforced on the bytes actually written (a zip's declared sizes can lie),
so a zip bomb stops at the unpacked-size limit. The format is detected from content, not the name.
"""
from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

COPY_BLOCK = 1024 * 1024


class ArchiveError(ValueError):
    """The archive is unsafe, corrupt or over a limit; the message says which and why."""


@dataclass(frozen=True)
class Limits:
    max_files: int = 50_000
    max_total_bytes: int = 2 * 1024**3
    max_file_bytes: int = 512 * 1024**2


@dataclass(frozen=True)
class UnpackReport:
    files: int
    bytes: int
    stripped_prefix: str


@dataclass(frozen=True)
class _Member:
    name: str
    kind: str  # "file", "dir", "symlink"
    link_target: str
    opener: object


def detect_archive_format(path: Path) -> str:
    """Return "zip", "tar.gz" or "tar" from the file's content."""
    with open(path, "rb") as fh:
        head = fh.read(512)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    raise ArchiveError("not a zip, tar or tar.gz archive (unrecognised content)")


def safe_member_path(name: str) -> str:
    """Normalise a member name or raise when it could escape the destination."""
    if "\x00" in name:
        raise ArchiveError(f"member name contains a NUL byte: {name!r}")
    cleaned = name.replace("\\", "/")
    if cleaned.startswith("/") or (len(cleaned) > 1 and cleaned[1] == ":"):
        raise ArchiveError(f"absolute path in archive: {name!r}")
    parts = [p for p in cleaned.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ArchiveError(f"path escapes the workspace ('..'): {name!r}")
    return "/".join(parts)


def _check_link(member_path: str, target: str) -> None:
    if target.startswith("/") or "\x00" in target:
        raise ArchiveError(f"symbolic link {member_path!r} points outside the workspace ({target!r})")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(member_path), target))
    if resolved == ".." or resolved.startswith("../"):
        raise ArchiveError(f"symbolic link {member_path!r} points outside the workspace ({target!r})")


def _zip_members(zf: zipfile.ZipFile) -> Iterator[_Member]:
    for info in zf.infolist():
        mode = (info.external_attr >> 16) & 0xFFFF
        if stat.S_ISLNK(mode):
            yield _Member(info.filename, "symlink", zf.read(info).decode("utf-8", "replace"), None)
        elif info.is_dir():
            yield _Member(info.filename, "dir", "", None)
        elif mode and not (stat.S_ISREG(mode) or mode & 0o170000 == 0):
            raise ArchiveError(f"special file in archive: {info.filename!r}")
        else:
            yield _Member(info.filename, "file", "", lambda info=info: zf.open(info))


def _tar_members(tf: tarfile.TarFile) -> Iterator[_Member]:
    for info in tf:
        if info.issym():
            yield _Member(info.name, "symlink", info.linkname, None)
        elif info.islnk():
            raise ArchiveError(f"hard link in archive is not supported: {info.name!r}")
        elif info.isdir():
            yield _Member(info.name, "dir", "", None)
        elif info.isreg():
            yield _Member(info.name, "file", "", lambda info=info: tf.extractfile(info))
        else:
            raise ArchiveError(f"special file (device, FIFO) in archive: {info.name!r}")


def _common_prefix(names: list[str], kinds: list[str]) -> str:
    """The single top-level directory every member lives in (GitHub-style archives), else ""."""
    tops = {n.split("/", 1)[0] for n in names if n}
    if len(tops) != 1:
        return ""
    top = tops.pop()
    if any(n == top and kind != "dir" for n, kind in zip(names, kinds)):
        return ""  # the top entry is a file or link, not a folder to strip
    return top if any(n.startswith(top + "/") for n in names) else ""


def unpack_archive(archive: Path, dest: Path, limits: Limits = Limits()) -> UnpackReport:
    """Unpack ``archive`` into the empty directory ``dest``; on any error ``dest`` is removed."""
    kind = detect_archive_format(archive)
    dest.mkdir(parents=True, exist_ok=False)
    try:
        if kind == "zip":
            try:
                with zipfile.ZipFile(archive) as zf:
                    return _extract(list(_zip_members(zf)), dest, limits)
            except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
                raise ArchiveError(f"corrupt zip archive: {exc}") from exc
        try:
            with tarfile.open(archive, mode="r:*") as tf:
                return _extract(list(_tar_members(tf)), dest, limits)
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise ArchiveError(f"corrupt tar archive: {exc}") from exc
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _extract(members: list[_Member], dest: Path, limits: Limits) -> UnpackReport:
    if len(members) > limits.max_files:
        raise ArchiveError(f"archive holds {len(members)} entries, over the limit of {limits.max_files}")
    paths = [safe_member_path(m.name) for m in members]
    prefix = _common_prefix(paths, [m.kind for m in members])
    total = files = 0
    for member, rel in zip(members, paths):
        if prefix:
            rel = rel[len(prefix) + 1 :] if rel != prefix else ""
        if not rel:
            continue
        target = dest / rel
        if member.kind == "symlink":
            _check_link(rel, member.link_target)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(member.link_target, target)
            continue
        _refuse_link_in_path(dest, target)
        if member.kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with member.opener() as src, open(target, "xb") as out:  # type: ignore[operator]
                total += _copy_limited(src, out, rel, total, limits)
        except FileExistsError as exc:
            raise ArchiveError(f"archive holds {rel!r} twice") from exc
        files += 1
    return UnpackReport(files=files, bytes=total, stripped_prefix=prefix)


def _refuse_link_in_path(dest: Path, target: Path) -> None:
    """A file may not be written through a symlink the archive itself created earlier."""
    current = dest
    for part in target.relative_to(dest).parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise ArchiveError(f"archive writes through a symbolic link: {target.relative_to(dest)}")
    if target.is_symlink():
        raise ArchiveError(f"archive overwrites a symbolic link: {target.relative_to(dest)}")


def _copy_limited(src: IO[bytes], out: IO[bytes], rel: str, total_before: int, limits: Limits) -> int:
    written = 0
    while block := src.read(COPY_BLOCK):
        written += len(block)
        if written > limits.max_file_bytes:
            raise ArchiveError(f"{rel}: unpacks to more than the per-file limit of {limits.max_file_bytes} bytes")
        if total_before + written > limits.max_total_bytes:
            raise ArchiveError(
                f"archive unpacks to more than {limits.max_total_bytes} bytes (possible zip bomb); stopped at {rel}"
            )
        out.write(block)
    return written
