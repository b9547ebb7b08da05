"""Both delivery modes of a run, from its own trees (no git, no host): what each would change against
the CUDA tree, file by file, with the lines counted. Shown in the run's diff view (a switch between the
two) and on the delivery page."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from migrator.projects.models import Run
from migrator.projects.workspaces import workspace_for
from worker.delivery.converted import converted_copy
from worker.delivery.model import MODES, Change, FileChange
from worker.delivery.singlesource import single_source

MAX_FILES = 200
DELIVERY_LABELS = {"single-source": "Single source", "copy": "Converted copy"}
MAX_DIFF_CHARS = 40_000  # per file shown


@dataclass
class FilePreview:
    path: str
    why: str
    added: int
    removed: int
    diff: str


@dataclass
class ModePreview:
    mode: str
    available: bool
    reason: str = ""
    files: list[FilePreview] = field(default_factory=list)
    notes: tuple[str, ...] = ()
    more: int = 0  # files left out of the page

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)


def _text(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines(keepends=True)


def _file(change: FileChange, original: bytes | None) -> FilePreview:
    lines = list(difflib.unified_diff(_text(original), _text(change.data), f"a/{change.path}", f"b/{change.path}"))
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return FilePreview(change.path, change.why, added, removed, "".join(lines)[:MAX_DIFF_CHARS])


def _preview(mode: str, change: Change, run: Run) -> ModePreview:
    source = workspace_for(run.pk).source
    preview = ModePreview(mode, True, notes=change.notes, more=max(len(change.files) - MAX_FILES, 0))
    for item in change.files[:MAX_FILES]:
        original = source / item.path
        preview.files.append(_file(item, original.read_bytes() if original.is_file() else None))
    return preview


def preview_mode(run: Run, mode: str) -> ModePreview:
    """What delivering ``run`` as ``mode`` ("single-source" or "copy") would change."""
    workspace = workspace_for(run.pk)
    if not workspace.source.is_dir():
        return ModePreview(mode, False, "the run's trees are gone (retention) or were never made")
    hip = workspace.hip if workspace.hip.is_dir() else None
    if mode == "single-source":
        return _preview(mode, single_source(workspace.source, hip), run)
    if hip is None:
        return ModePreview(mode, False, "the run made no translated tree (its hipify stage did not run)")
    return _preview(mode, converted_copy(workspace.source, hip), run)


def preview_modes(run: Run) -> list[ModePreview]:
    return [preview_mode(run, mode) for mode in MODES]
