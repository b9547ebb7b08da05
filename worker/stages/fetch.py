"""Fetch stage: put the run's source into ``workspace.source``.

Input: ``ctx.source_spec``: ``{"kind": "archive", "path", "sha256", "name", "limits": {...}}`` or
``{"kind": "git", "url", "ref", "allow_local", "timeout_s", "trusted_networks", "limits": {...}}``.
Output data: the pinned source (archive sha256 or resolved commit id), file and byte counts.
Failure modes (all failed results with a clear summary, nothing written outside the workspace):
unsafe or corrupt archives, archives or git trees over the limits, malformed/unreachable git URLs, URLs
leading to inside addresses, unknown refs, a ``source_subdir`` setting that names no directory of the tree. With ``source_subdir`` a git source is
fetched as a partial, sparse clone of that directory, and ``workspace.source`` holds only that directory,
plus the paths beside it that its build files name (``sources/beside.py``: ``-I../app-b``,
``include ../../common/make.config``, ``add_subdirectory(../x ...)``), read statically and kept only when
they lie inside the repository. With such paths the tree keeps its layout from the deepest folder holding
them all, and ``project_dir`` says where the subdirectory lies in it (the build runs there); without, the
subdirectory is the tree.
"""
from __future__ import annotations

import os
import posixpath
import shutil
from collections.abc import Sequence
from pathlib import Path

from worker.context import StageContext, StageResult
from worker.payloads import FetchData
from worker.sources.archives import ArchiveError, Limits, unpack_archive
from worker.sources.beside import common_root, paths_beside
from worker.sources.gitsource import Beside, GitSourceError, shallow_clone
from worker.sources.hostguard import HostPolicy
from worker.sources.treelinks import first_link_in_path
from worker.wording import counted


def run(ctx: StageContext) -> StageResult:
    spec = ctx.source_spec
    dest = ctx.workspace.source
    if dest.exists():
        shutil.rmtree(dest)  # a redelivered stage starts clean
    ctx.workspace.ensure()
    if spec.get("kind") == "archive":
        result = _fetch_archive(ctx, spec, dest)
    elif spec.get("kind") == "git":
        result = _fetch_git(ctx, spec, dest)
    else:
        return StageResult.failed(f"unknown source kind {spec.get('kind')!r}")
    subdir = ctx.settings.source_subdir.strip("/")
    if result.outcome != "passed" or not subdir:
        return result
    inner = dest / subdir
    if inner.is_symlink() or not inner.is_dir() or not inner.resolve().is_relative_to(dest.resolve()):
        shutil.rmtree(dest, ignore_errors=True)
        return StageResult.failed(f"source_subdir: the tree has no directory {subdir}/", **result.data)
    kept = paths_beside(dest, subdir, lambda path: _exists_in(dest, path))
    project_dir = narrow_to_subdir(dest, subdir, [item.path for item in kept])
    ctx.log(f"kept only {subdir}/ (source_subdir)\n" if not kept else
            f"kept {subdir}/ (source_subdir) and, from beside it, what its build files name:\n"
            + "".join(f"  {item.path}: {item.build_file} names {item.word}\n" for item in kept)
            + f"  the tree keeps the repository's layout; the build runs in {project_dir}/\n")
    files, size = _count_tree(dest)
    narrowed = FetchData(source_subdir=subdir, files=files, bytes=size, project_dir=project_dir,
                         kept_beside=[item.describe() for item in kept])
    beside = f" and {len(kept)} path(s) beside it ({', '.join(item.path for item in kept[:4])})" if kept else ""
    return StageResult.passed(f"{result.summary}; kept {subdir}/{beside}: {files} files ({_human(size)})"[:500],
                              **{**result.data, **narrowed})


def narrow_to_subdir(dest: Path, subdir: str, beside: Sequence[str] = ()) -> str:
    """Replace ``dest`` by its directory ``subdir`` and the repository-relative paths ``beside`` (outside
    it, none holding another), laid out from the deepest folder holding them all; return where
    ``subdir`` lies in the new tree ("" when it is the tree)."""
    top = common_root(subdir, beside)
    whole = dest.with_name(dest.name + ".whole")
    shutil.rmtree(whole, ignore_errors=True)
    dest.rename(whole)
    if not beside:
        (whole / subdir).rename(dest)
    else:
        dest.mkdir()
        for path in (subdir, *beside):
            moved = dest / posixpath.relpath(path, top or ".")
            moved.parent.mkdir(parents=True, exist_ok=True)
            (whole / path).rename(moved)
    shutil.rmtree(whole)
    return posixpath.relpath(subdir, top or ".") if beside else ""


def _exists_in(root: Path, path: str) -> bool:
    """``path`` (repository-relative) is in the tree, reached without following a symbolic link."""
    return (root / path).exists() and not (root / path).is_symlink() and not first_link_in_path(root, path)


def _fetch_archive(ctx: StageContext, spec: dict[str, object], dest: Path) -> StageResult:
    archive = Path(str(spec["path"]))
    ctx.log(f"unpacking {spec.get('name', archive.name)} (sha256 {spec.get('sha256')})\n")
    if not archive.is_file():
        return StageResult.failed(f"archive file is missing from storage: {archive.name}")
    try:
        report = unpack_archive(archive, dest, _limits(spec))
    except ArchiveError as exc:
        ctx.log(f"rejected: {exc}\n")
        return StageResult.failed(f"archive rejected: {exc}", **FetchData(sha256=str(spec.get("sha256") or "")))
    if report.stripped_prefix:
        ctx.log(f"stripped the common top-level folder {report.stripped_prefix}/\n")
    ctx.log(f"unpacked {report.files} files, {report.bytes} bytes\n")
    ctx.progress(report.files, report.files)
    data = FetchData(kind="archive", sha256=str(spec.get("sha256") or ""), files=report.files, bytes=report.bytes)
    return StageResult.passed(f"unpacked {counted(report.files, 'file')} ({_human(report.bytes)})", **data)


def _fetch_git(ctx: StageContext, spec: dict[str, object], dest: Path) -> StageResult:
    url, ref = str(spec.get("url", "")), str(spec.get("ref", ""))
    ctx.log(f"cloning {url} at {ref or 'the default branch'}\n")
    try:
        result = shallow_clone(
            url, ref, dest, allow_local=bool(spec.get("allow_local")), timeout=int(str(spec.get("timeout_s", 300))),
            log=ctx.log, sparse_dir=ctx.settings.source_subdir, limits=_limits(spec), policy=_git_policy(spec),
            beside=_beside_folders(ctx.settings.source_subdir),
        )
    except GitSourceError as exc:
        ctx.log(f"failed: {exc}\n")
        return StageResult.failed(str(exc), **FetchData(kind="git", url=url, ref=ref))
    files, size = _count_tree(dest)
    ctx.progress(files, files)
    removed = [path for path, _target in result.removed_links]
    note = f"; removed {len(removed)} symbolic link(s) pointing outside the checkout: {', '.join(removed)}" if removed else ""
    data = FetchData(kind="git", url=url, ref=result.ref, commit=result.commit, files=files, bytes=size,
                     removed_links=removed)
    return StageResult.passed(
        f"cloned {ref or 'HEAD'} at {result.commit[:12]}: {counted(files, 'file')} ({_human(size)}){note}"[:500], **data)


def _beside_folders(subdir: str) -> Beside | None:
    """What a sparse clone of ``subdir`` adds to its checkout: the paths its build files name beside it."""
    if not subdir.strip("/"):
        return None
    return lambda root, exists, is_file: [item.path for item in paths_beside(root, subdir.strip("/"), exists, is_file)]


def _limits(spec: dict[str, object]) -> Limits:
    raw = spec.get("limits") or {}
    return Limits(**raw) if isinstance(raw, dict) else Limits()


def _git_policy(spec: dict[str, object]) -> HostPolicy:
    """Where a git URL may lead: public addresses, plus the networks the operator trusts."""
    networks = spec.get("trusted_networks") or []
    return HostPolicy.build([], [str(network) for network in networks] if isinstance(networks, list) else [])


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
