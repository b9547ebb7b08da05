"""An on-disk copy of built rule tables, so a fresh command-line process starts fast.

Building the table for a target reads 9,000 mappings (most of a cold start); the pickled result
loads several times faster. Only the command line turns it on (``enable``); library callers keep the
engine free of file writes. Entries are keyed by the data files' identity and the target, written
atomically, and any unreadable entry is simply rebuilt. The caller (``translator.rules``) names the
entry (``cache_key``) and checks what it gets back, so this module knows nothing of rules.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from translator.mapping import DATA_FILE

_directory: Path | None = None


def enable(directory: Path) -> None:
    global _directory
    _directory = directory


def default_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "migrator" / "translator"


def cache_key(parts: str, declared: frozenset[str] | None) -> str:
    """An entry's name: the mapping data's identity, the target's ``parts`` and its declared names."""
    stat = DATA_FILE.stat()
    digest = hashlib.sha256(f"{stat.st_size}:{stat.st_mtime_ns}:{DATA_FILE}".encode())
    digest.update(parts.encode())
    digest.update("\n".join(sorted(declared)).encode() if declared is not None else b"-")
    return digest.hexdigest()[:32]


def load(key: str) -> object | None:
    if _directory is None:
        return None
    try:
        with open(_directory / f"{key}.pickle", "rb") as handle:
            found: object = pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None
    return found


def store(key: str, value: object) -> None:
    if _directory is None:
        return
    try:
        _directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=_directory, delete=False, suffix=".tmp") as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(handle.name, _directory / f"{key}.pickle")
    except OSError:
        return  # a read-only home only costs speed
