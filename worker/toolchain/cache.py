"""Content-addressed object cache shared by the runs of one project.

Key (see ``compile.cache_key``): toolchain fingerprint, the compile flags with
tree-relative paths, the TU's path and text, and the path and text of every file
in the tree it includes (transitively, found by scanning ``#include`` lines; when
a file uses ``#include MACRO`` every header in the tree is hashed instead).
Hashing sources rather than ``hipcc -E`` output keeps an unchanged re-run of a
whole tree far under a second; system headers are covered by the toolchain
fingerprint. Only successful compiles are stored, with their output so warnings
are replayed on a hit.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CachedObject:
    object_path: Path
    output: str  # compiler output of the original compile (warnings)


class ObjectCache:
    def __init__(self, cache_dir: Path) -> None:
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

    def put(self, key: str, built_object: Path, output: str) -> None:
        object_path, meta_path = self._paths(key)
        object_path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_copy(built_object, object_path)
        _atomic_write(meta_path, json.dumps({"output": output}))


def materialise(cached: Path, destination: Path) -> None:
    """Put a cached object at ``destination`` (hard link when possible, else copy)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.unlink(missing_ok=True)
    try:
        os.link(cached, destination)
    except OSError:
        shutil.copy2(cached, destination)


def _atomic_copy(source: Path, destination: Path) -> None:
    # Two runs of one project may fill the cache at once: write aside, then rename.
    fd, temporary = tempfile.mkstemp(dir=destination.parent, suffix=".tmp")
    os.close(fd)
    shutil.copy2(source, temporary)
    os.replace(temporary, destination)


def _atomic_write(destination: Path, text: str) -> None:
    fd, temporary = tempfile.mkstemp(dir=destination.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(temporary, destination)
