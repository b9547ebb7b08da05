"""The hipify stage's engine for PyTorch extensions: PyTorch's own hipify over the extension's
sources (the whole tree for an extension, the kernel directories of a mixed repository), on a
full copy of the source. Used when the project kind calls for it and the engine setting is the
default (``builtin``); without PyTorch in the worker's environment it says so and the builtin
engine runs instead.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from translator.account import FileAccount, TreeAccount
from translator.globs import is_excluded
from translator.torch_hipify import ENGINE_NAME, SOURCE_SUFFIXES, hipify_extension, unavailable_reason
from worker.context import StageContext
from worker.stages.applicability import project_kind

EXTENSION_KINDS = frozenset({"pytorch-extension", "mixed"})


def _extension_dirs(ctx: StageContext) -> list[str]:
    payload = ctx.scan_data().get("project_kind")
    dirs = payload.get("kernel_dirs") if isinstance(payload, dict) else None
    return [d for d in dirs if isinstance(d, str)] if isinstance(dirs, list) and dirs else ["."]


def _sources(root: Path, directory: str, globs: tuple[str, ...]) -> list[Path]:
    base = root if directory == "." else root / directory
    found = []
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and path.suffix.lower() in SOURCE_SUFFIXES \
                and not is_excluded(rel, globs):
            found.append(path)
    return found


def wants_torch_engine(ctx: StageContext) -> bool:
    return ctx.settings.hipify_engine == "builtin" and project_kind(ctx) in EXTENSION_KINDS


def run_torch_engine(ctx: StageContext) -> TreeAccount | None:
    """The account of PyTorch's hipify, or None (logged) when PyTorch is not available here."""
    reason = unavailable_reason()
    if reason:
        ctx.log(f"hipify: {ENGINE_NAME} not used: {reason}; falling back to the builtin engine\n")
        return None
    source, hip = ctx.workspace.source, ctx.workspace.hip
    if hip.exists():
        shutil.rmtree(hip)
    shutil.copytree(source, hip, symlinks=True)
    account = TreeAccount(source=str(source), destination=str(hip), engine=ENGINE_NAME)
    globs = tuple(ctx.settings.exclude_globs)
    directories = _extension_dirs(ctx)
    for index, directory in enumerate(directories, start=1):
        ctx.check_cancelled()
        project = hip if directory == "." else hip / directory
        files = _sources(hip, directory, globs)
        ctx.log(f"hipify: {ENGINE_NAME} over {directory}/ ({len(files)} sources)\n")
        prefix = "" if directory == "." else directory.rstrip("/") + "/"
        for item in hipify_extension(project, files) if files else []:
            original, output = prefix + item.path, prefix + item.hipified
            entry = FileAccount(path=original, changed=item.changed, status="translated" if item.changed
                                else "unchanged")
            if output != original:
                entry.renamed_to = output
                account.renames[original] = output
            account.files.append(entry)
            ctx.log(f"{entry.status:<10} {original}" + (f" -> {output}" if output != original else "") + "\n")
        ctx.progress(index, len(directories))
    return account
