"""Safe unpacking of uploaded .zip / .tar / .tar.gz / .tgz archives.

Every member is checked before anything is written: absolute paths, ``..`` components, names
longer than the file system allows, device files and FIFOs are rejected, as are archives over the
file-count limit. Links are checked against what has actually been written: a link whose target
leaves the tree (as text, or once earlier links are followed) is refused, and so is any member whose
parent folders pass through a link; a last pass checks every link of the finished tree again, so the
order of members cannot matter. Sizes are enforced on the bytes actually written (a zip's declared
sizes can lie), so a zip bomb stops at the unpacked-size limit. Files keep their executable bit
(never setuid, setgid or sticky). The format is detected from content, not the name.
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from worker.sources.treelinks import (
    PATH_MAX,
    first_link_in_path,
    links_leaving,
    overlong_component,
    text_leaves,
    within,
)

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
    executable: bool = False


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
    path = "/".join(parts)
    _check_length(path, f"member {_short(name)}")
    return path


def _short(text: str, keep: int = 80) -> str:
    return repr(text if len(text) <= keep else text[:keep] + "…")


def _check_length(path: str, what: str) -> None:
    if long := overlong_component(path):
        raise ArchiveError(
            f"name too long: {what} has a path component of {len(long.encode('utf-8', 'surrogateescape'))} "
            f"bytes ({_short(long, 40)}), longer than the 255 bytes file systems allow"
        )
    if len(path.encode("utf-8", "surrogateescape")) > PATH_MAX - 256:
        raise ArchiveError(f"name too long: {what} is longer than the {PATH_MAX - 256} bytes allowed")


def _check_link(dest: Path, member_path: str, target: str) -> None:
    """Refuse a link whose text, or whose target once earlier links are followed, leaves ``dest``."""
    _check_length(target.lstrip("/"), f"symbolic link {member_path!r}")
    if text_leaves(member_path, target) or not within(dest, dest / member_path.rpartition("/")[0] / target):
        raise ArchiveError(f"symbolic link {member_path!r} points outside the workspace ({_short(target)})")


def _executable(mode: int) -> bool:
    return bool(mode & 0o111)


def _zip_members(zf: zipfile.ZipFile) -> Iterator[_Member]:
    for info in zf.infolist():
        mode = (info.external_attr >> 16) & 0xFFFF  # Unix mode, when the archiver recorded one
        if stat.S_ISLNK(mode):
            yield _Member(info.filename, "symlink", _zip_link_target(zf, info), None)
        elif info.is_dir():
            yield _Member(info.filename, "dir", "", None)
        elif mode and not (stat.S_ISREG(mode) or mode & 0o170000 == 0):
            raise ArchiveError(f"special file in archive: {info.filename!r}")
        else:
            yield _Member(info.filename, "file", "", lambda info=info: zf.open(info), _executable(mode))


def _zip_link_target(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    """A zip stores a link's target as the entry's content: read no more than a path can hold."""
    with zf.open(info) as fh:
        target = fh.read(PATH_MAX + 1)
    if len(target) > PATH_MAX:
        raise ArchiveError(f"name too long: symbolic link {info.filename!r} has a target over {PATH_MAX} bytes")
    return target.decode("utf-8", "replace")


def _tar_members(tf: tarfile.TarFile) -> Iterator[_Member]:
    for info in tf:
        if info.issym():
            yield _Member(info.name, "symlink", info.linkname, None)
        elif info.islnk():
            raise ArchiveError(f"hard link in archive is not supported: {info.name!r}")
        elif info.isdir():
            yield _Member(info.name, "dir", "", None)
        elif info.isreg():
            yield _Member(info.name, "file", "", lambda info=info: tf.extractfile(info), _executable(info.mode))
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
        if rel:
            written = _write_member(member, rel, dest, limits, total)
            total += written
            files += member.kind == "file"
    if escaping := links_leaving(dest):  # members in any order: check the finished tree once more
        path, target = escaping[0]
        raise ArchiveError(f"symbolic link {path!r} points outside the workspace ({_short(target)})")
    return UnpackReport(files=files, bytes=total, stripped_prefix=prefix)


def _write_member(member: _Member, rel: str, dest: Path, limits: Limits, total: int) -> int:
    """Write one member below ``dest``; returns the bytes written."""
    target = dest / rel
    _refuse_link_in_path(dest, rel)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if member.kind == "symlink":
            _check_link(dest, rel, member.link_target)
            os.symlink(member.link_target, target)
            return 0
        if member.kind == "dir":
            target.mkdir(exist_ok=True)
            return 0
        with member.opener() as src, open(target, "xb") as out:  # type: ignore[operator]
            written = _copy_limited(src, out, rel, total, limits)
        os.chmod(target, 0o755 if member.executable else 0o644)  # never setuid, setgid or sticky
        return written
    except FileExistsError as exc:
        raise ArchiveError(f"archive holds {rel!r} twice") from exc
    except NotADirectoryError as exc:
        raise ArchiveError(f"archive holds {rel!r} below a file of the same name") from exc
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise ArchiveError(f"{_short(rel)}: the name is longer than the file system allows") from exc
        raise


def _refuse_link_in_path(dest: Path, rel: str) -> None:
    """Nothing may be written through, or over, a symbolic link the archive itself created earlier."""
    if link := first_link_in_path(dest, rel):
        raise ArchiveError(f"archive writes through a symbolic link: {rel} (via {link})")
    if (dest / rel).is_symlink():
        raise ArchiveError(f"archive overwrites a symbolic link: {rel}")


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
