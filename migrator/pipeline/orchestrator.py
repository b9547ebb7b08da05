"""Runs stages and records their results: the only module that writes stage outcomes.

``execute_stage`` claims a queued stage (conditional update, so redelivery is harmless), builds
the stage's context, calls the stage module, and records the result. ``advance`` decides which
stage comes next and hands it to a dispatcher (Celery in production, a direct call in the
synchronous management command). A stage whose module is not installed is recorded as skipped
with "not available on this installation", never as passed.
"""
from __future__ import annotations

import importlib
import logging
import secrets
import shutil
import socket
import time
from collections.abc import Callable
from types import ModuleType

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings as django_settings

from migrator.pipeline.stagelog import StageLog
from migrator.projects import transitions
from migrator.projects.constants import (
    FINAL_RUN_STATES,
    FINAL_STAGE_STATES,
    NOT_AVAILABLE,
    STAGE_NAMES,
    SourceKind,
    StageState,
    Trigger,
)
from migrator.projects.models import Run, Stage
from migrator.projects.signals import run_finished, stage_finished
from migrator.projects.workspaces import project_cache_dir, workspace_for
from migrator.runners.presence import online_runners, smoke_queue
from worker.contained import append_record
from worker.context import StageCancelled, StageContext, StageResult, Workspace
from worker.project_settings import ProjectSettings, SettingsError
from worker.stages.smoke import REFERENCE_PENDING, run_reference
from worker.toolchain.roots import ToolchainNotFound, select_root
from worker.toolchain.sandbox import SandboxUnavailable, isolation_notes
from worker.toolchain.volume import copy_image
from worker.toolchain.work import WorkError, copy_work, delete_tree, open_work, work_paths

log = logging.getLogger(__name__)

_OUTCOME_STATE = {
    "passed": StageState.PASSED, "failed": StageState.FAILED, "skipped": StageState.SKIPPED,
    "not_applicable": StageState.NOT_APPLICABLE,
}
Dispatcher = Callable[[Stage, str], None]


def load_stage_module(name: str) -> ModuleType | None:
    """The stage's module, or None when this installation does not have it."""
    module_name = f"worker.stages.{name}"
    if name in getattr(django_settings, "MIGRATOR_DISABLED_STAGES", ()):
        return None
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise


def queue_for(stage: Stage, settings: ProjectSettings) -> str:
    """Smoke needs a ROCm runner with a matching GPU only when there is something to run;
    otherwise any CPU worker records the skip."""
    if stage.name == "smoke" and settings.smoke_command and load_stage_module("smoke") is not None:
        return smoke_queue(settings.offload_archs)
    return "cpu"


def wants_reference(stage: Stage, settings: ProjectSettings) -> bool:
    """A CUDA reference run accompanies smoke when asked for and a CUDA runner is online."""
    return (
        stage.name == "smoke" and bool(settings.smoke_command) and settings.smoke_compare_reference
        and bool(online_runners("cuda"))
    )


def execute_reference(run_id: int, *, worker: str = "") -> dict[str, object]:
    """Build the untranslated sources with nvcc and run the smoke command on a CUDA runner."""
    stage = Stage.objects.select_related("run", "run__project", "run__archive").get(run_id=run_id, name="smoke")
    workspace = workspace_for(run_id)
    log_path = workspace.records / "reference.log"
    try:
        def write(text: str) -> None:
            append_record(log_path, text)

        ctx = build_context(stage, StageLog(stage.pk, run_id), log=write)
        ctx.progress = lambda done, total: None
        result = run_reference(ctx)
    except Exception:  # the smoke stage must learn the reference is gone, not wait for it
        reference = secrets.token_hex(6)
        log.exception("reference run of run %s crashed (reference id %s)", run_id, reference)
        result = {"ok": False, "summary": f"reference run crashed: internal error (reference id {reference})"}
    finally:
        (workspace.records / REFERENCE_PENDING).unlink(missing_ok=True)
    return result


def next_stage(run_id: int) -> Stage | None:
    """The first stage still queued, provided every stage before it is final."""
    for stage in Stage.objects.filter(run_id=run_id).order_by("position"):
        if stage.state == StageState.QUEUED:
            return stage
        if stage.state not in FINAL_STAGE_STATES:
            return None
    return None


def advance(run_id: int, dispatch: Dispatcher) -> Stage | None:
    """Hand the next stage to ``dispatch`` (or record its skip right away when it cannot run here)."""
    while (stage := next_stage(run_id)) is not None:
        run = Run.objects.select_related("project").get(pk=run_id)
        if run.cancel_requested:
            return None
        if load_stage_module(stage.name) is None:
            transitions.skip_stage(stage.pk, f"{stage.name}: {NOT_AVAILABLE}", {"not_available": True})
            continue
        settings = ProjectSettings.stored_or_default(run.settings_used)
        if stage.task_id:
            return stage  # already handed out; a redelivery will pick it up
        dispatch(stage, queue_for(stage, settings))
        return stage
    return None


def execute_stage(stage_id: int, *, worker: str = "", inline: bool = False) -> StageState | None:
    """Claim and run one stage; returns its final state, or None when another worker had it (or the
    sweep ended it while it ran).

    ``inline``: the whole run executes in this process (``run_sync``); told to the receivers."""
    worker = worker or socket.gethostname()
    if not transitions.claim_stage(stage_id, worker):
        return None
    stage = Stage.objects.select_related("run", "run__project", "run__archive").get(pk=stage_id)
    with StageLog(stage.pk, stage.run_id) as stage_log:
        state, summary, data = _run_module(stage, stage_log)
    final = transitions.finish_stage(stage.pk, state, summary, data)
    if final is None:  # no longer running: the sweep ended it (worker lost, cancelled) and announced that
        log.warning("stage %s of run %s was ended by someone else meanwhile; this worker's outcome (%s) is dropped",
                    stage.name, stage.run_id, state)
        return None
    announce_stage(final, inline=inline)
    return StageState(final.state)


def _run_module(stage: Stage, stage_log: StageLog) -> tuple[StageState, str, dict[str, object]]:
    module = load_stage_module(stage.name)
    if module is None:
        return StageState.SKIPPED, f"{stage.name}: {NOT_AVAILABLE}", {"not_available": True}
    started = time.monotonic()
    try:
        ctx = build_context(stage, stage_log)
        for note in isolation_notes():  # what this worker's sandbox falls back on (nothing on a full setup)
            stage_log.write(f"[migrator] sandbox: {note}\n")
        result: StageResult = module.run(ctx)
    except StageCancelled:
        stage_log.write("\n[migrator] cancelled\n")
        return StageState.CANCELLED, "cancelled by user", {}
    except SoftTimeLimitExceeded:
        stage_log.write("\n[migrator] stage time limit reached\n")
        return StageState.FAILED, "stage time limit reached", {}
    except SettingsError as exc:
        stage_log.write(f"[migrator] bad project settings: {exc}\n")
        return StageState.FAILED, f"bad project settings: {exc}", {}
    except MissingSource as exc:
        stage_log.write(f"[migrator] {exc}\n")
        return StageState.FAILED, str(exc), {"missing_source": True}
    except Exception:  # a bug in a stage must end as a visible failure, never a stuck run
        # The traceback (host paths, code) goes to the operator log only; the user gets the id to quote.
        reference = secrets.token_hex(6)
        log.exception("stage %s of run %s crashed (reference id %s)", stage.name, stage.run_id, reference)
        stage_log.write(f"\n[migrator] internal error (reference id {reference})\n")
        return StageState.FAILED, f"internal error (reference id {reference})", {}
    stage_log.write(f"[migrator] {stage.name} {result.outcome} in {time.monotonic() - started:.2f} s\n")
    return _OUTCOME_STATE[result.outcome], result.summary, result.data


def build_context(stage: Stage, stage_log: StageLog, log: Callable[[str], None] | None = None) -> StageContext:
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
        source_spec=source_spec(run), previous=previous, log=log or stage_log.write,
        progress=stage_log.progress, is_cancelled=stage_log.is_cancelled,
    )


def _copy_parent_workspace(run: Run, workspace: Workspace, stage_log: StageLog, settings: ProjectSettings) -> None:
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
            shutil.copytree(folder, workspace.root / name, symlinks=True, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns(REFERENCE_PENDING))
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


def announce_stage(stage: Stage, *, inline: bool = False) -> None:
    """Pin the fetched commit on the run, then tell whoever listens that the stage (and perhaps the
    run) is final."""
    if stage.name == "fetch" and stage.state == StageState.PASSED and stage.data.get("commit"):
        Run.objects.filter(pk=stage.run_id).update(commit_sha=str(stage.data["commit"]))
    stage_finished.send(sender=Stage, stage=stage, inline=inline)
    announce_if_finished(stage.run_id)


def announce_if_finished(run_id: int) -> None:
    """Send ``run_finished`` when the run is final (after the stage that ended it, or a sweep)."""
    run = Run.objects.filter(pk=run_id).first()
    if run is not None and run.state in FINAL_RUN_STATES:
        run_finished.send(sender=Run, run=run)


def run_sync(run: Run, on_stage: Callable[[Stage], None] = lambda s: None) -> Run:
    """Run every stage in this process, in order (management command, tests)."""

    def dispatch_inline(stage: Stage, queue: str) -> None:
        execute_stage(stage.pk, worker=f"{socket.gethostname()} (inline)", inline=True)

    for _ in STAGE_NAMES:
        stage = advance(run.pk, dispatch_inline)
        if stage is None:
            break
        stage.refresh_from_db()
        on_stage(stage)
    run.refresh_from_db()
    return run
