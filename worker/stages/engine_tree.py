"""Where a hipify engine that runs in the sandbox writes, and how what it wrote reaches the translated tree.

PyTorch's hipify and hipify-perl read user files, so they run in the sandbox over the toolchain root and
what they leave behind is hostile: any name in their output may be a link to a host file or a FIFO. The
engine sees the source and the translated tree read-only and writes into one fresh folder of the run's
``work/``, ``OUTPUT_DIR``; the translated tree (``workspace.hip``) is made on the root side as a copy of
the source and each file the engine produced is copied into it through ``worker/contained.py`` (opened
beneath the output folder, which is never followed if it became a link; regular files only, size-capped),
never into a folder of the translated tree that is itself a link.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from worker.contained import ContainedFileError, Entry, clean_relative, copy_out, open_beneath, walk_beneath
from worker.context import StageContext
from worker.sources.treelinks import first_link_in_path
from worker.toolchain.roots import ToolchainRoot
from worker.toolchain.sandbox import MOUNT, Sandbox
from worker.toolchain.work import make_dirs, open_work, remove, run_sandbox

OUTPUT_DIR = "hipify-out"  # the one folder of the workspace an engine may write
MAX_FILE = 64 * 1024 * 1024  # an engine's output file larger than this is not taken


@contextmanager
def engine_sandbox(ctx: StageContext, root: ToolchainRoot, tools: Mapping[str, Path] | None = None, *,
                   folders: Sequence[str] = ()) -> Iterator[tuple[Sandbox, Path]]:
    """A sandbox of the run (``run_sandbox``: the source and the translated tree read-only, only the run's
    ``work/`` writable) and the engine's fresh output folder in it, ``work/OUTPUT_DIR`` (with ``folders``
    made below it), all made by sandboxed commands; the folder is removed when the block ends."""
    if not ctx.workspace.hip.exists():  # bound read-only, so the engine cannot make it for us
        ctx.workspace.hip.mkdir(parents=True)
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log) as work:
        sandbox = run_sandbox(root, ctx.workspace, work, tools=tools)
        inside = MOUNT / OUTPUT_DIR
        remove(sandbox, inside)
        make_dirs(sandbox, inside, *(inside / folder for folder in folders if folder not in ("", ".")))
        try:
            yield sandbox, work / OUTPUT_DIR
        finally:
            discard(work / OUTPUT_DIR)


def copy_source(source: Path, hip: Path) -> None:
    """The translated tree starts as a copy of the source (links copied as links), made on the root side."""
    if hip.exists() or hip.is_symlink():
        _remove(hip)
    shutil.copytree(source, hip, symlinks=True)


def copy_into(output: Path, produced: str, hip: Path, target: str | None = None, *, executable: bool = False) -> str:
    """Copy the engine's file ``output/produced`` to ``hip/target`` (default: the same path); "" or why not."""
    try:
        name = clean_relative(target or produced)
        if first_link_in_path(hip, name):
            return f"{name}: a folder on its way in the translated tree is a link; not written"
        copy_out(output, produced, hip / name, limit=MAX_FILE)
        os.chmod(hip / name, 0o755 if executable else 0o644)  # our own new file: no link can be there
    except OSError as exc:  # ContainedFileError included: absent, a link out, not a regular file, too large
        return f"{target or produced}: {exc.strerror or exc}"
    return ""


def copy_changed(output: Path, source: Path, hip: Path, log: Callable[[str], None]) -> list[str]:
    """Copy every regular file of the engine's tree ``output`` that is new or differs from ``source`` into ``hip``.

    Returns what was copied (tree-relative); a file that cannot be taken is logged and the source's copy stays."""
    copied: list[str] = []
    for entry in walk_beneath(output):
        if _unchanged(source, output, entry):
            continue
        problem = copy_into(output, entry.relative, hip, executable=entry.executable)
        if problem:
            log(f"hipify: not taken from the engine's output: {problem}\n")
        else:
            copied.append(entry.relative)
    return copied


def discard(output: Path) -> None:
    """Remove the engine's folder (``shutil.rmtree`` works on descriptors and never follows a link)."""
    if output.exists() or output.is_symlink():
        _remove(output)


def _unchanged(source: Path, output: Path, entry: Entry) -> bool:
    """True when ``source`` has a regular file at the entry's path with the same bytes."""
    try:
        original = open_beneath(source, entry.relative)
    except ContainedFileError:
        return False
    with os.fdopen(original, "rb") as handle:
        if os.fstat(handle.fileno()).st_size != entry.size or entry.size > MAX_FILE:
            return entry.size > MAX_FILE  # too large to take: the source's copy stays
        try:
            produced = open_beneath(output, entry.relative)
        except ContainedFileError:
            return True  # vanished or swapped for something else: nothing to take
        with os.fdopen(produced, "rb") as other:
            return _same_bytes(handle, other)


def _same_bytes(first: BinaryIO, second: BinaryIO) -> bool:
    while True:
        a, b = first.read(1 << 20), second.read(1 << 20)
        if a != b:
            return False
        if not a:
            return True


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)
