"""The context a stage (or a CUDA reference run) runs in: the run's settings within the installation's caps,
its workspace (a re-run's copied from its parent's), the earlier stages' data and what fetch fetches."""
from __future__ import annotations

import shutil

from django.conf import settings as django_settings

from migrator.pipeline.stagelog import ReferenceLog, StageLog
from migrator.projects.constants import SourceKind, Trigger
from migrator.projects.models import Run, Stage
from migrator.projects.workspaces import project_cache_dir, workspace_for
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.toolchain.roots import ToolchainNotFound, select_root
from worker.toolchain.sandbox import SandboxUnavailable
from worker.toolchain.volume import copy_image
from worker.toolchain.work import WorkError, copy_work, delete_tree, open_work, work_paths


def build_context(stage: Stage, stage_log: StageLog | ReferenceLog) -> StageContext:
    run = stage.run
    settings = ProjectSettings.from_dict(run.settings_used).within(django_settings.MIGRATOR_SETTING_CAPS)
    workspace = workspace_for(run.pk)
    if stage.name != "fetch" and not workspace.source.exists() and run.parent_id:
        _copy_parent_workspace(run, workspace, stage_log, settings)
    workspace.ensure()
    previous = {
        s.name: s.data for s in run.stages.filter(position__lt=stage.position).only("name", "data")
    }
    return StageContext(
        run_id=run.pk, project_id=run.project_id, workspace=workspace, settings=settings,
        cache_dir=project_cache_dir(run.project_id),
        source_spec=source_spec(run), previous=previous, log=stage_log.write,
        progress=stage_log.progress, is_cancelled=stage_log.is_cancelled,
    )


def _copy_parent_workspace(run: Run, workspace: Workspace, stage_log: StageLog | ReferenceLog,
                           settings: ProjectSettings) -> None:
    """A re-run starts from its parent's folders: the root-written ``source/``, ``hip/`` and ``records/``
    copied on the root side; the parent's ``work/`` (which its builds wrote) copied by a sandboxed
    ``cp -a`` from a read-only view of it, never walked on the host."""
    parent_ws = workspace_for(run.parent_id or 0)
    number = run.parent.number if run.parent else "?"
    if run.parent is not None and run.parent.files_expired_at is not None:
        raise MissingSource(f"the files of run #{number} expired on {run.parent.files_expired_at:%Y-%m-%d}; "
                            "re-run from fetch")
    if not parent_ws.source.is_dir():
        raise MissingSource(f"the workspace of run #{number} is gone; re-run from fetch")
    stage_log.write(f"[migrator] reusing the workspace of run #{number}\n")
    delete_tree(workspace.root)  # fd-based: whatever an earlier attempt's builds left is never followed
    workspace.ensure()
    for name in ("source", "hip", "records"):
        folder = parent_ws.root / name
        if folder.is_dir() and not folder.is_symlink():
            shutil.copytree(folder, workspace.root / name, symlinks=True, dirs_exist_ok=True)
    parent_image = work_paths(parent_ws.root)[1]
    if parent_image.is_file():  # the work volume, copied sparse (a plain copy would write its whole size)
        copy_image(parent_image, work_paths(workspace.root)[1])
        return
    try:
        root = select_root(settings.toolchain)
    except ToolchainNotFound:
        root = None  # a CUDA runner: the host's system folders, read-only, as its own sandbox uses
    try:
        with open_work(workspace, size_mb=settings.workspace_mb) as work:
            copy_work(parent_ws.work, work, root)
    except (WorkError, SandboxUnavailable) as exc:
        stage_log.write(f"[migrator] the build folders of run #{number} were not copied: {exc}\n")


class MissingSource(Exception):
    """The run's recorded source cannot be found (its archive row or git URL is gone)."""


def source_spec(run: Run) -> dict[str, object]:
    """What the fetch stage fetches, from the run's own pinned source only: an archive run never
    becomes a git fetch (or the reverse), whatever happened to the rows around it."""
    if run.source_kind == SourceKind.ARCHIVE:
        if run.archive is None:
            raise MissingSource(
                f"this run's archive is missing (archive id {run.archive_id or 'none'} is not in the database)"
            )
        return {
            "kind": "archive", "path": run.archive.path, "sha256": run.archive.sha256,
            "name": run.archive.original_name,
            "limits": _source_limits(),
        }
    if run.source_kind != SourceKind.GIT or not run.git_url:
        raise MissingSource(f"this run has no source to fetch (kind {run.source_kind!r}, no git URL)")
    return {
        "kind": "git", "url": run.git_url, "ref": run.commit_sha or run.ref,
        # The command line is run by an operator, who may name local repositories.
        "allow_local": django_settings.MIGRATOR_ALLOW_LOCAL_GIT or run.trigger == Trigger.CLI,
        "timeout_s": django_settings.MIGRATOR_GIT_TIMEOUT_S,
        "trusted_networks": list(django_settings.MIGRATOR_GIT_TRUSTED_NETWORKS),
        "limits": _source_limits(),
    }


def _source_limits() -> dict[str, int]:
    """What an unpacked archive or a git checkout may write (both checked before anything is written)."""
    return {
        "max_files": django_settings.MIGRATOR_MAX_ARCHIVE_FILES,
        "max_total_bytes": django_settings.MIGRATOR_MAX_UNPACKED_BYTES,
        "max_file_bytes": django_settings.MIGRATOR_MAX_FILE_BYTES,
    }
