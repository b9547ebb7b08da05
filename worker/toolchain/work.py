"""The one way a stage opens its run's writable area (``work/``) around its sandbox work.

``open_work(workspace)`` yields ``<run>/work``: the run's work volume, mounted for the duration of
the block and unmounted after (``volume.py``: a sparse ext4 image ``<run>/work.img`` of
``size_mb``), or, where loop mounts cannot be had, a plain folder whose size each sandboxed job
watches. Nested and concurrent uses in one process share one mount. ``log`` gets one line saying
which of the two it is.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from worker.context import Workspace
from worker.project_settings import ProjectSettings
from worker.toolchain.volume import work_area

WORK = "work"
IMAGE = "work.img"


def work_paths(run_root: Path) -> tuple[Path, Path]:
    """The work folder (the volume's mount point) and the image of a run."""
    return run_root / WORK, run_root / IMAGE


@contextmanager
def open_work(
    workspace: Workspace, *, size_mb: int = ProjectSettings.workspace_mb, log: Callable[[str], None] | None = None,
) -> Iterator[Path]:
    folder, image = work_paths(workspace.root)
    workspace.root.mkdir(parents=True, exist_ok=True)
    with work_area(folder, image, size_mb) as area:
        if log is not None:
            log(f"[migrator] {area.describe()}\n")
        yield area.path
