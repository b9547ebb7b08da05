"""Content-addressed object cache shared by the runs of one project.

Key (see ``compile.cache_key``): toolchain fingerprint, the compile flags with
tree-relative paths, the TU's path and text, and the path and text of every file
in the tree it includes (transitively, found by scanning ``#include`` lines; when
a file uses ``#include MACRO`` every header in the tree is hashed instead).
Hashing sources rather than ``hipcc -E`` output keeps an unchanged re-run of a
whole tree far under a second; system headers are covered by the toolchain
fingerprint. Only successful compiles are stored, with their output so warnings
are replayed on a hit.

The cache lies where no sandbox writes. An object goes in through ``worker.contained.copy_out`` (a new
file, opened beneath the build folder, regular files only); cached objects come back into a build
folder only through a sandboxed copy from a read-only folder (``staged``), never by the root side
writing into the build folder, and never as a hard link a later build could write through.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from worker.contained import copy_out

MAX_OBJECT_BYTES = 2 * 1024 * 1024 * 1024  # a fat object for many targets can be large; larger is refused


@dataclass(frozen=True)
class CachedObject:
    object_path: Path
    output: str  # compiler output of the original compile (warnings)


class ObjectCache:
    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self.root = cache_dir / "objects"

    def _paths(self, key: str) -> tuple[Path, Path]:
        folder = self.root / key[:2]
        return folder / f"{key}.o", folder / f"{key}.json"

    def get(self, key: str) -> CachedObject | None:
        object_path, meta_path = self._paths(key)
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            return None
        if not object_path.is_file():
            return None
        return CachedObject(object_path, str(meta.get("output", "")))

    def put(self, key: str, base: Path, relative: str, output: str) -> None:
        """Store the object at ``base/relative`` (a build folder a sandbox wrote: read through
        ``copy_out``); raises ``worker.contained.ContainedFileError`` when it is not a regular file there."""
        object_path, meta_path = self._paths(key)
        object_path.parent.mkdir(parents=True, exist_ok=True)
        copy_out(base, relative, object_path, limit=MAX_OBJECT_BYTES)  # written aside, then renamed
        _atomic_write(meta_path, json.dumps({"output": output}))


@contextmanager
def staged(cache_dir: Path, objects: Mapping[str, Path]) -> Iterator[Path]:
    """A folder holding ``objects`` (relative path -> cached object) under their relative paths, readable
    by the sandbox user, for one sandboxed copy into a build folder; removed afterwards. Hard links where
    the file system allows (the sandbox sees the folder read-only and copies out of it)."""
    parent = cache_dir / "restore"
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=parent))
    try:
        os.chmod(folder, 0o755)
        for relative, cached in objects.items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(cached, target)
            except OSError:
                shutil.copyfile(cached, target)
                os.chmod(target, 0o644)
        for inner, _dirs, _files in os.walk(folder):
            os.chmod(inner, 0o755)  # whatever the worker's umask, the sandbox user may enter
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _atomic_write(destination: Path, text: str) -> None:
    fd, temporary = tempfile.mkstemp(dir=destination.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(temporary, destination)
