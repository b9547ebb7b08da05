"""Reading files of a tree that untrusted code may have shaped, without ever leaving the tree.

A workspace that a build has run in is hostile: any name in it may have become a symbolic link to a host
file, a FIFO that blocks whoever opens it, a device, or a folder swapped for a link. Every reader on the
root side (review pages, reports, downloads, diffs, patches, the pipeline's own copy-outs) goes through
this module, which opens relative to a directory descriptor so that the kernel itself refuses to leave it:

- ``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`` where the kernel has it (Linux 5.6+): links
  inside the tree are followed, any step above the base or through ``/proc`` magic links is refused;
- elsewhere, a walk one component at a time with ``O_NOFOLLOW``, which refuses every link.

Only regular files are read (``O_NONBLOCK`` so a FIFO cannot stall the opener; ``fstat`` after opening
decides), at most ``limit`` bytes. Everything here is framework-free and takes no shell.
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import secrets
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

_SYS_OPENAT2 = 437  # the same number on every architecture Linux has given it
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class ContainedFileError(OSError):
    """The name is absent, not a regular file, too large, or leads outside its tree."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _openat2(dir_fd: int, relative: str, flags: int, resolve: int = 0) -> int:
    """openat2 beneath ``dir_fd``; raises OSError (ENOSYS where the kernel or libc lacks it)."""
    if _LIBC is None:
        raise OSError(errno.ENOSYS, "no libc")
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS | resolve)
    fd = _LIBC.syscall(_SYS_OPENAT2, dir_fd, os.fsencode(relative), ctypes.byref(how), ctypes.sizeof(how))
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), relative)
    return int(fd)


def _has_openat2() -> bool:
    root = os.open("/", _DIR_FLAGS)
    try:
        os.close(_openat2(root, ".", _DIR_FLAGS))
    except OSError:
        return False
    finally:
        os.close(root)
    return True


OPENAT2 = _has_openat2()


def clean_relative(relative: str | PurePosixPath) -> str:
    """``relative`` as a tree-relative POSIX path; raises ContainedFileError for absolute, empty or ``..``."""
    text = str(relative)
    parts = PurePosixPath(text).parts
    if not text or text.startswith("/") or "\x00" in text or ".." in parts or not parts:
        raise ContainedFileError(errno.EINVAL, "not a path inside the tree", text)
    return "/".join(part for part in parts if part != ".") or "."


def _open_walking(dir_fd: int, relative: str, flags: int) -> int:
    """The same as openat2 beneath, for kernels without it: no link is followed at all."""
    parts = relative.split("/")
    current = os.dup(dir_fd)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=current)
            os.close(current)
            current = nxt
        return os.open(parts[-1], flags | os.O_NOFOLLOW, dir_fd=current)
    finally:
        os.close(current)


def open_beneath(
    base: Path, relative: str | PurePosixPath, *, directory: bool = False, follow_links: bool = True
) -> int:
    """A file descriptor for ``base/relative`` that provably lies inside ``base``; with ``follow_links``
    False, no link at all is followed (not even one that stays inside).

    Raises ContainedFileError when it does not exist, leads outside, or (files) is not a regular file."""
    name = clean_relative(relative)
    flags = _DIR_FLAGS if directory else _FILE_FLAGS
    try:
        base_fd = os.open(base, _DIR_FLAGS | os.O_NOFOLLOW)
    except OSError as exc:
        raise ContainedFileError(exc.errno or errno.ENOENT, "no such tree", base.name) from exc
    try:
        if OPENAT2:
            fd = _openat2(base_fd, name, flags, 0 if follow_links else _RESOLVE_NO_SYMLINKS)
        else:
            fd = _open_walking(base_fd, name, flags)
    except OSError as exc:
        raise ContainedFileError(exc.errno or errno.EACCES, f"{name}: {exc.strerror or 'refused'}", name) from exc
    finally:
        os.close(base_fd)
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISDIR(mode) if directory else stat.S_ISREG(mode)):
        os.close(fd)
        raise ContainedFileError(errno.EINVAL, f"{name}: not a {'folder' if directory else 'regular file'}", name)
    return fd


def read_beneath(base: Path, relative: str | PurePosixPath, *, limit: int, follow_links: bool = True) -> bytes:
    """The contents of a regular file inside ``base``; ContainedFileError when larger than ``limit``."""
    fd = open_beneath(base, relative, follow_links=follow_links)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise ContainedFileError(errno.EFBIG, f"{relative}: {size} bytes, over the limit of {limit}", str(relative))
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew after fstat
        raise ContainedFileError(errno.EFBIG, f"{relative}: over the limit of {limit} bytes", str(relative))
    return data


def read_text_beneath(base: Path, relative: str | PurePosixPath, *, limit: int, follow_links: bool = True) -> str:
    return read_beneath(base, relative, limit=limit, follow_links=follow_links).decode("utf-8", errors="replace")


def is_file_beneath(base: Path, relative: str | PurePosixPath, *, follow_links: bool = True) -> bool:
    try:
        os.close(open_beneath(base, relative, follow_links=follow_links))
    except ContainedFileError:
        return False
    return True


def is_dir_beneath(base: Path, relative: str | PurePosixPath) -> bool:
    """True when ``base/relative`` is a folder inside ``base`` (reached without leaving it)."""
    try:
        os.close(open_beneath(base, relative, directory=True))
    except ContainedFileError:
        return False
    return True


def stat_beneath(base: Path, relative: str | PurePosixPath) -> os.stat_result:
    """``fstat`` of the regular file ``base/relative`` opened beneath ``base``; ContainedFileError otherwise."""
    fd = open_beneath(base, relative)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def load_json_beneath(base: Path, relative: str | PurePosixPath, *, limit: int) -> dict[str, object] | None:
    """The JSON object in the regular file ``base/relative``; None when absent, outside, too large or not
    an object. Parsed once per version of the file (a large translation account is megabytes, and every
    page of a run reads it; the live run page re-renders a panel every second): callers must not modify it."""
    try:
        fd = open_beneath(base, relative)
    except ContainedFileError:
        return None
    try:
        info = os.fstat(fd)
        if info.st_size > limit:
            return None
        key = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)
        cached = _JSON_CACHE.get(key)
        if cached is None:
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read(limit + 1)
            try:
                loaded = json.loads(data.decode("utf-8", errors="replace")) if len(data) <= limit else None
            except ValueError:
                loaded = None
            cached = _JSON_CACHE.put(key, loaded if isinstance(loaded, dict) else None)
    finally:
        os.close(fd)
    return cached[0]


class _ParsedCache:
    """A small cache of parsed files by (device, inode, mtime, size); a miss re-reads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: dict[tuple[int, int, int, int], tuple[dict[str, object] | None]] = {}
        self.lock = threading.Lock()  # web servers may serve pages from several threads

    def get(self, key: tuple[int, int, int, int]) -> tuple[dict[str, object] | None] | None:
        with self.lock:
            return self.entries.get(key)

    def put(self, key: tuple[int, int, int, int], value: dict[str, object] | None) -> tuple[dict[str, object] | None]:
        with self.lock:
            while len(self.entries) >= self.size:
                self.entries.pop(next(iter(self.entries)))
            self.entries[key] = (value,)
            return self.entries[key]


_JSON_CACHE = _ParsedCache(16)


def copy_out(base: Path, relative: str | PurePosixPath, destination: Path, *, limit: int) -> int:
    """Copy a regular file from inside ``base`` to ``destination`` (written atomically); returns its size.

    The copy is a new file (never a link to the original) with the original's executable bits."""
    fd = open_beneath(base, relative)
    try:
        info = os.fstat(fd)
        if info.st_size > limit:
            raise ContainedFileError(errno.EFBIG, f"{relative}: {info.st_size} bytes, over the limit of {limit}",
                                     str(relative))
        destination.parent.mkdir(parents=True, exist_ok=True)
        temporary = destination.with_name(f".{destination.name}.{secrets.token_hex(6)}.part")
        try:
            with os.fdopen(os.dup(fd), "rb") as source, open(temporary, "xb") as target:
                copied = _copy_at_most(source, target, limit)
                os.fchmod(target.fileno(), 0o755 if info.st_mode & 0o111 else 0o644)
            if copied > limit:  # it grew after fstat
                raise ContainedFileError(errno.EFBIG, f"{relative}: over the limit of {limit} bytes", str(relative))
            os.replace(temporary, destination)
        finally:
            temporary.unlink(missing_ok=True)
    finally:
        os.close(fd)
    return copied


def _copy_at_most(source: BinaryIO, target: BinaryIO, limit: int) -> int:
    """Copy until the end or one byte past ``limit``; returns the bytes read (over ``limit``: stopped)."""
    copied = 0
    while chunk := source.read(min(1 << 20, limit + 1 - copied)):
        copied += len(chunk)
        if copied > limit:
            break
        target.write(chunk)
    return copied


@dataclass(frozen=True)
class Entry:
    relative: str  # tree-relative POSIX path
    size: int
    executable: bool


def walk_beneath(base: Path, relative: str = ".", *, skip: frozenset[str] = frozenset()) -> Iterator[Entry]:
    """Every regular file under ``base/relative`` (no link followed, nothing outside entered), sorted per
    folder; folders named in ``skip`` (``.git``, say) are not entered."""
    try:
        top = open_beneath(base, relative, directory=True) if relative != "." else os.open(base, _DIR_FLAGS | os.O_NOFOLLOW)
    except (ContainedFileError, OSError):
        return
    prefix = "" if relative == "." else clean_relative(relative) + "/"
    try:
        for folder, dirs, files, folder_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            dirs[:] = sorted(name for name in dirs if name not in skip)
            inner = "" if folder == "." else folder.removeprefix("./") + "/"
            for name in sorted(files):
                try:
                    info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    yield Entry(prefix + inner + name, info.st_size, bool(info.st_mode & 0o111))
    finally:
        os.close(top)


def copy_tree_out(base: Path, relative: str, destination: Path, *, max_files: int, max_bytes: int) -> list[Entry]:
    """Copy the regular files under ``base/relative`` (a folder of a hostile tree) into ``destination``, a
    folder the sandbox cannot write, keeping their relative paths; returns what was copied.

    Links, FIFOs and devices are left out; nothing outside ``base/relative`` is entered or read. Raises
    ContainedFileError when the folder is missing or holds more than ``max_files`` files or ``max_bytes``
    bytes (what was copied so far stays: the caller owns ``destination``)."""
    if not is_dir_beneath(base, relative):
        raise ContainedFileError(errno.ENOENT, f"{relative}: no such folder", relative)
    prefix = "" if relative == "." else clean_relative(relative) + "/"
    copied: list[Entry] = []
    total = 0
    for entry in walk_beneath(base, relative):
        if len(copied) >= max_files:
            raise ContainedFileError(errno.EFBIG, f"{relative}: more than {max_files} files", relative)
        inner = entry.relative.removeprefix(prefix)
        size = copy_out(base, entry.relative, destination / inner, limit=max_bytes - total)
        total += size
        copied.append(Entry(inner, size, entry.executable))
    return copied


def write_record(path: Path, data: str | bytes) -> None:
    """Write a pipeline record atomically: a temporary file beside it, then ``os.replace``.

    ``path`` must lie in a folder the sandbox can never write (the run's records folder), so no link
    can be waiting there; the rename replaces whatever name is there rather than writing through it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.part")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def append_record(path: Path, text: str) -> None:
    """Append to a record (a log) in a folder the sandbox cannot write; never through a link."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(text)
