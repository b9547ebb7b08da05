"""Fetch stage: put the run's source into ``workspace.source``.

Input: ``ctx.source_spec``: ``{"kind": "archive", "path", "sha256", "name", "limits": {...}}`` or
``{"kind": "git", "url", "ref", "allow_local", "timeout_s"}``.
Output data: the pinned source (archive sha256 or resolved commit id), file and byte counts.
Failure modes (all failed results with a clear summary, nothing written outside the workspace):
unsafe or corrupt archives, archives over the limits, malformed/unreachable git URLs, unknown refs.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from migrator.lib.archives import ArchiveError, Limits, unpack_archive
from migrator.lib.gitsource import GitSourceError, shallow_clone
from worker.context import StageContext, StageResult
from worker.wording import counted


def run(ctx: StageContext) -> StageResult:
    spec = ctx.source_spec
    dest = ctx.workspace.source
    if dest.exists():
        shutil.rmtree(dest)  # a redelivered stage starts clean
    ctx.workspace.ensure()
    if spec.get("kind") == "archive":
        return _fetch_archive(ctx, spec, dest)
    if spec.get("kind") == "git":
        return _fetch_git(ctx, spec, dest)
    return StageResult.failed(f"unknown source kind {spec.get('kind')!r}")


def _fetch_archive(ctx: StageContext, spec: dict[str, object], dest: Path) -> StageResult:
    archive = Path(str(spec["path"]))
    ctx.log(f"unpacking {spec.get('name', archive.name)} (sha256 {spec.get('sha256')})\n")
    if not archive.is_file():
        return StageResult.failed(f"archive file is missing from storage: {archive.name}")
    raw_limits = spec.get("limits") or {}
    limits = Limits(**raw_limits) if isinstance(raw_limits, dict) else Limits()
    try:
        report = unpack_archive(archive, dest, limits)
    except ArchiveError as exc:
        ctx.log(f"rejected: {exc}\n")
        return StageResult.failed(f"archive rejected: {exc}", sha256=spec.get("sha256"))
    if report.stripped_prefix:
        ctx.log(f"stripped the common top-level folder {report.stripped_prefix}/\n")
    ctx.log(f"unpacked {report.files} files, {report.bytes} bytes\n")
    ctx.progress(report.files, report.files)
    return StageResult.passed(
        f"unpacked {counted(report.files, 'file')} ({_human(report.bytes)})",
        kind="archive", sha256=spec.get("sha256"), files=report.files, bytes=report.bytes,
    )


def _fetch_git(ctx: StageContext, spec: dict[str, object], dest: Path) -> StageResult:
    url, ref = str(spec.get("url", "")), str(spec.get("ref", ""))
    ctx.log(f"cloning {url} at {ref or 'the default branch'}\n")
    try:
        result = shallow_clone(
            url, ref, dest, allow_local=bool(spec.get("allow_local")), timeout=int(str(spec.get("timeout_s", 300))),
            log=ctx.log,
        )
    except GitSourceError as exc:
        ctx.log(f"failed: {exc}\n")
        return StageResult.failed(str(exc), kind="git", url=url, ref=ref)
    files, size = _count_tree(dest)
    ctx.progress(files, files)
    removed = [path for path, _target in result.removed_links]
    note = f"; removed {len(removed)} symbolic link(s) pointing outside the checkout: {', '.join(removed)}" if removed else ""
    return StageResult.passed(
        f"cloned {ref or 'HEAD'} at {result.commit[:12]}: {counted(files, 'file')} ({_human(size)}){note}"[:500],
        kind="git", url=url, ref=result.ref, commit=result.commit, files=files, bytes=size, removed_links=removed,
    )


def _count_tree(root: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            if not path.is_symlink():
                files += 1
                size += path.stat().st_size
    return files, size


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
