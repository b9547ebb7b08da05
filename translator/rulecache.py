"""An on-disk copy of built rule tables, so a fresh command-line process starts fast.

Building the table for a target reads 9,000 mappings (most of a cold start); the pickled result
loads several times faster. Only the command line turns it on (``enable``); library callers keep the
engine free of file writes. Entries are keyed by the data files' identity and the target, written
atomically, and any unreadable entry is simply rebuilt.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from translator.mapping import DATA_FILE

if TYPE_CHECKING:
    from translator.rules import RuleSet, Target

_directory: Path | None = None


def enable(directory: Path) -> None:
    global _directory
    _directory = directory


def default_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "migrator" / "translator"


def _key(target: Target) -> str:
    stat = DATA_FILE.stat()
    digest = hashlib.sha256(f"{stat.st_size}:{stat.st_mtime_ns}:{DATA_FILE}".encode())
    digest.update(repr((target.roc, target.miopen, target.hip_version, target.experimental,
                        target.header_folders, target.hip_data_types)).encode())
    digest.update("\n".join(sorted(target.declared)).encode() if target.declared is not None else b"-")
    return digest.hexdigest()[:32]


def load(target: Target) -> RuleSet | None:
    if _directory is None:
        return None
    try:
        with open(_directory / f"{_key(target)}.pickle", "rb") as handle:
            found = pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None
    from translator.rules import RuleSet

    return found if isinstance(found, RuleSet) else None


def store(target: Target, ruleset: RuleSet) -> None:
    if _directory is None:
        return
    try:
        _directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=_directory, delete=False, suffix=".tmp") as handle:
            pickle.dump(ruleset, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(handle.name, _directory / f"{_key(target)}.pickle")
    except OSError:
        return  # a read-only home only costs speed
