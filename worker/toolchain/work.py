"""A run's ``work/`` folder: the one place sandboxed commands write, and the only ways in and out of it.

Every sandbox of a run (``run_sandbox``) sees ``work/`` read-write at ``/workspace``, the fetched source
read-only at ``/workspace/source`` and the translated tree read-only at ``/workspace/.translated``; the
run's ``records/`` are never visible. Once a sandboxed command has run there, any name in ``work/`` may
be a link to a host file, a FIFO, or a folder swapped for a link, so the root side never writes, chmods,
chowns, lists or deletes a path in it by name:

- folders are made, emptied and copied by sandboxed commands (``make_dirs``, ``remove``,
  ``copy_translated``, ``copy_work``), as the sandbox user and inside its mount namespace;
- files come out through ``worker.contained`` (``read_beneath``, ``copy_out``, ``copy_tree_out``:
  opened beneath ``work/``, regular files only, size-capped);
- inputs the sandbox needs (a preset's script and spec, cached objects) are written on the root side
  into folders the sandbox cannot write and bound read-only (``Sandbox(binds=...)``);
- a whole ``work/`` (or a run's folder holding one) is deleted with ``shutil.rmtree``, which works
  through directory descriptors and never follows a link (``delete_tree``).

``open_work`` is the single entry point every stage takes to ``work/``: the run's size-limited work volume
is mounted there for the stage (``volume.py``).
"""
from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from worker.context import Workspace
from worker.project_settings import ProjectSettings
from worker.toolchain.roots import ToolchainRoot
from worker.toolchain.sandbox import MOUNT, Sandbox, SandboxLimits, SandboxResult
from worker.toolchain.volume import work_area

WORK = "work"  # the ROCm side's area: hipify engines, compile, link, smoke
REFERENCE_WORK = "work-cuda"  # the CUDA reference's own area: it runs on another host while smoke runs
SOURCE_MOUNT = MOUNT / "source"  # the fetched original, read-only
TRANSLATED_MOUNT = MOUNT / ".translated"  # the translated tree as translation wrote it, read-only
HIP_COPY = MOUNT / "hip"  # the copy of the translated tree that builds run in (made in the sandbox)
BUILD = MOUNT / "build"
PARENT_MOUNT = PurePosixPath("/tmp/parent-work")  # a parent run's work/, read-only, while it is copied
_STEP_LIMITS = SandboxLimits(timeout_s=600, memory_mb=1024)  # the process limit counts the uid's processes host-wide
_ARGUMENTS_PER_CALL = 500  # keeps each command line far below the kernel's limit


class WorkError(RuntimeError):
    """A sandboxed step on ``work/`` (making, emptying or copying folders) failed; the message says which."""


def work_paths(run_root: Path, area: str = WORK) -> tuple[Path, Path]:
    """A work area of a run: its folder (the volume's mount point) and its image."""
    return run_root / area, run_root / f"{area}.img"


def all_work_paths(run_root: Path) -> list[tuple[Path, Path]]:
    """Every work area a run has (for removal)."""
    return [work_paths(run_root, area) for area in (WORK, REFERENCE_WORK)]


@contextmanager
def open_work(
    workspace: Workspace, *, size_mb: int = ProjectSettings.workspace_mb, log: Callable[[str], None] | None = None,
    area: str = WORK,
) -> Iterator[Path]:
    """The run's ``work/`` for the stage's sandboxes, for as long as the stage uses it: the run's work volume
    (a sparse ext4 image ``work.img`` of ``size_mb``, mounted for the block and unmounted after,
    ``volume.py``) or, where loop mounts cannot be had, a plain folder whose size each sandboxed job
    watches. Nested and concurrent uses in one process share one mount; ``log`` gets one line saying which.
    ``area``: ``REFERENCE_WORK`` for the CUDA reference, whose host may run it while smoke holds ``work``."""
    folder, image = work_paths(workspace.root, area)
    workspace.root.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(folder) and not stat.S_ISDIR(os.lstat(folder).st_mode):
        raise WorkError("the run's work folder is not a folder")
    with work_area(folder, image, size_mb) as opened:
        if log is not None:
            log(f"[migrator] {opened.describe()}\n")
        yield opened.path


def run_sandbox(
    root: ToolchainRoot | None, workspace: Workspace, work: Path, *, gpu_devices: bool = False,
    binds: Mapping[str, Path] | None = None, environment: Mapping[str, str] | None = None,
    tools: Mapping[str, Path] | None = None,
) -> Sandbox:
    """A sandbox of the run: ``work`` (from ``open_work``) writable, the source and the translated tree
    read-only, ``binds`` read-only too, the product's ``tools`` under /mnt/migrator; nothing of ``records/``."""
    trees = {str(SOURCE_MOUNT): workspace.source, str(TRANSLATED_MOUNT): workspace.hip}
    present = {inside: host for inside, host in trees.items() if _is_real_dir(host)}
    return Sandbox(root, work, gpu_devices=gpu_devices, read_only=(), environment=environment,
                   binds={**present, **(binds or {})}, tools=tools)


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def step(sandbox: Sandbox, argv: Sequence[str], what: str) -> SandboxResult:
    """One of our own commands over ``work/`` in the sandbox; WorkError (saying ``what``) when it fails."""
    done = sandbox.run(list(argv), limits=_STEP_LIMITS)
    if not done.process.ok:
        tail = done.process.output.strip().splitlines()[-3:]
        raise WorkError(f"could not {what} in the sandbox (exit status {done.process.returncode})"
                        + (f": {' / '.join(tail)}" if tail else ""))
    return done


def remove(sandbox: Sandbox, *paths: str | PurePosixPath) -> None:
    """``rm -rf`` of sandbox paths under /workspace, as the sandbox user."""
    for chunk in _chunks([_in_work(path) for path in paths]):
        step(sandbox, ["rm", "-rf", "--", *chunk], "remove old build outputs")


def make_dirs(sandbox: Sandbox, *paths: str | PurePosixPath) -> None:
    """``mkdir -p`` of sandbox paths under /workspace, as the sandbox user."""
    for chunk in _chunks(sorted({_in_work(path) for path in paths})):
        step(sandbox, ["mkdir", "-p", "--", *chunk], "make the build folders")


def copy_translated(sandbox: Sandbox, *, fresh: bool) -> None:
    """Make ``/workspace/hip``, the build's own copy of the translated tree (``cp -a`` in the sandbox).

    ``fresh``: any earlier copy (and what a build left in it) goes first; else an existing copy stays."""
    if fresh:
        remove(sandbox, HIP_COPY)
    elif _exists_in_sandbox(sandbox, HIP_COPY):
        return
    step(sandbox, ["cp", "-a", "--", str(TRANSLATED_MOUNT), str(HIP_COPY)], "copy the translated tree")


def _exists_in_sandbox(sandbox: Sandbox, path: PurePosixPath) -> bool:
    return sandbox.run(["test", "-e", str(path)], limits=_STEP_LIMITS).process.ok


def copy_work(parent_work: Path, work: Path, root: ToolchainRoot | None) -> None:
    """Copy a parent run's ``work/`` into this run's (empty) one: ``cp -a`` in a sandbox that sees the
    parent's folder read-only, so whatever its builds left there (links included) is copied as it is
    and never followed on the host."""
    if not _is_real_dir(parent_work):
        return
    sandbox = Sandbox(root, work, read_only=(), binds={str(PARENT_MOUNT): parent_work})
    step(sandbox, ["cp", "-a", "--", f"{PARENT_MOUNT}/.", f"{MOUNT}/"], "copy the parent run's build folders")


def delete_tree(folder: Path) -> None:
    """Delete a folder a sandbox may have written (a ``work/``, or a run's folder holding one):
    ``shutil.rmtree`` walks it by directory descriptor and unlinks links without following them."""
    if not shutil.rmtree.avoids_symlink_attacks:  # pragma: no cover - every Linux Python has the fd-based one
        raise WorkError("this platform's rmtree could follow a link a build planted; refusing to delete")
    if os.path.lexists(folder):
        shutil.rmtree(folder)


def _in_work(path: str | PurePosixPath) -> str:
    inside = PurePosixPath(path)
    if MOUNT not in inside.parents or ".." in inside.parts:
        raise ValueError(f"{path} is not a path under {MOUNT}")
    return str(inside)


def _chunks(items: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), _ARGUMENTS_PER_CALL):
        yield items[start:start + _ARGUMENTS_PER_CALL]
