"""What a delivery changes: files written (or deleted) on top of the CUDA tree, and why."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["single-source", "copy"]
MODES: tuple[Mode, ...] = ("single-source", "copy")


@dataclass(frozen=True)
class FileChange:
    path: str  # relative, POSIX
    data: bytes | None  # None: the file is deleted
    why: str

    @property
    def digest(self) -> str:
        return digest(self.data)


@dataclass(frozen=True)
class Change:
    mode: Mode
    build_system: str  # "cmake", "make" or "" (none understood)
    files: tuple[FileChange, ...] = ()
    notes: tuple[str, ...] = ()  # what could not be done, for the report
    examined: tuple[str, ...] = field(default=())  # the build files looked at this time

    def by_path(self) -> dict[str, FileChange]:
        return {change.path: change for change in self.files}


def digest(data: bytes | None) -> str:
    """The content key of a file as delivered ("" for a deleted file)."""
    return "" if data is None else hashlib.sha256(data).hexdigest()
