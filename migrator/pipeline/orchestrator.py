"""Runs stages and records their results: the only module that writes stage outcomes.

``execute_stage`` claims a queued stage (conditional update, so redelivery is harmless), builds
the stage's context, calls the stage module, and records the result. ``advance`` decides which
stage comes next and hands it to a dispatcher (Celery in production, a direct call in the
synchronous management command). A stage whose module is not installed is recorded as skipped
with "not available on this installation", never as passed.

The CUDA reference run is a row of its own (``ReferenceRun``). When smoke is next and a comparison is
asked for, ``advance`` creates that row and hands it to the reference dispatcher (a ``cuda`` runner);
the smoke stage is handed out only once the row is final: passed, failed, or skipped (no CUDA runner
online, none within the wait limit, or a run of the command line, which runs in one process). The
smoke stage therefore never waits for the reference while holding a ROCm runner, the two never use
the run's work volume at the same time, and a comparison that never happened leaves the run partial.

A run whose compile failed gets the build half of that reference (the original units compiled with nvcc,
nothing run): once the run is final, ``advance`` creates the row and hands it to a CUDA runner, or to the
local nvcc of a run of the command line. Its compile results are the evidence that separates the port
from the project's code on the failing files (``worker.toolchain.reference_evidence``); when it is final,
``reference_finished`` tells the areas that show causes. With no CUDA side the row is skipped, saying so.
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

from migrator.pipeline.stagelog import ReferenceLog, StageLog
from migrator.projects import transitions
from migrator.projects.causes import run_reference_build
from migrator.projects.constants import (
    FINAL_RUN_STATES,
    FINAL_STAGE_STATES,
    NOT_AVAILABLE,
    PYTORCH_QUEUE,
    STAGE_NAMES,
    SourceKind,
    StageState,
    Trigger,
)
from migrator.projects.models import ReferenceRun, Run, Stage
from migrator.projects.queues import is_rocm_queue
from migrator.projects.signals import reference_finished, run_finished, stage_finished
from migrator.projects.workspaces import project_cache_dir, workspace_for
from migrator.runners.presence import online_runners, pytorch_runner_online, smoke_queue
from worker.context import StageCancelled, StageContext, StageResult, Workspace
from worker.project_settings import ProjectSettings, SettingsError
from worker.runner.reference_reuse import reference_key
from worker.stages.smoke import run_reference, run_reference_compiles
from worker.toolchain.roots import ToolchainNotFound, select_root
from worker.toolchain.sandbox import SandboxUnavailable, isolation_notes
from worker.toolchain.volume import copy_image
from worker.toolchain.work import WorkError, copy_work, delete_tree, open_work, work_paths
from worker.wording import wait_text

log = logging.getLogger(__name__)

_OUTCOME_STATE = {
    "passed": StageState.PASSED, "failed": StageState.FAILED, "skipped": StageState.SKIPPED,
    "not_applicable": StageState.NOT_APPLICABLE,
}
Dispatcher = Callable[[Stage, str], None]
ReferenceDispatcher = Callable[[ReferenceRun], None]
CUDA_QUEUE = "cuda"
NO_CUDA_RUNNER_ONLINE = "not run: no CUDA runner online"
NOT_RUN_INLINE = "not run: a run of the command line executes in one process, without a CUDA runner"


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
    otherwise any CPU worker records the skip. A PyTorch extension's link (its own build) and smoke go
    to a runner with a ROCm PyTorch when one is online; without one a CPU worker records "needs a ROCm
    PyTorch runner"."""
    if stage.name in ("link", "smoke") and _extension_compiled(stage):
        wanted = stage.name == "link" or bool(settings.smoke_command.strip())
        return PYTORCH_QUEUE if wanted and pytorch_runner_online() else "cpu"
    if stage.name == "smoke" and settings.smoke_command and load_stage_module("smoke") is not None:
        return smoke_queue(settings.offload_archs)
    return "cpu"


def _extension_compiled(stage: Stage) -> bool:
    """The run's compile built PyTorch extensions against the hipified header tree (``mode`` extension)."""
    data = Stage.objects.filter(run_id=stage.run_id, name="compile").values_list("data", flat=True).first()
    return isinstance(data, dict) and data.get("mode") == "extension"


def reference_requested(stage: Stage, settings: ProjectSettings) -> bool:
    """A CUDA comparison is asked for: smoke has a command to run and ``smoke_compare_reference`` is on."""
    return stage.name == "smoke" and bool(settings.smoke_command.strip()) and settings.smoke_compare_reference


def no_cuda_runner_within(settings: ProjectSettings) -> str:
    return f"not run: no CUDA runner within {wait_text(settings.smoke_wait_timeout_s)}"


def _reference_settled(run: Run, settings: ProjectSettings, send: ReferenceDispatcher | None) -> bool:
    """True when smoke may be handed out: the run's reference row is final (made final here when it cannot
    run at all). A reference still queued or running keeps smoke waiting in its row; with no ``send`` (a
    caller that cannot hand out references) a reference not yet handed out is left for one that can."""
    reference = transitions.create_reference(run.pk)
    if reference.is_final:
        return True
    if reference.task_id:
        return False
    reused = _parent_reference(run, settings)
    if reused is not None:
        return transitions.reuse_reference(reference, *reused) is not None or _final(reference)
    if send is None:
        return False
    if not online_runners("cuda"):
        closed = transitions.skip_reference(reference, NO_CUDA_RUNNER_ONLINE, {"no_runner": True})
        return closed is not None or _final(reference)
    send(reference)
    return _final(reference)  # a dispatcher may settle it at once (``run_sync`` records it as not run)


def _final(reference: ReferenceRun) -> bool:
    reference.refresh_from_db()
    return reference.is_final


def _parent_reference(run: Run, settings: ProjectSettings) -> tuple[str, dict[str, object]] | None:
    """A re-run's parent's reference, when it passed for the same smoke command, build and source
    (``worker.runner.reference_reuse``): its summary and data, to record on this run without running it."""
    parent = ReferenceRun.objects.filter(run_id=run.parent_id, state=StageState.PASSED).first() if run.parent_id else None
    if parent is None or not isinstance(parent.data, dict):
        return None
    try:
        spec = source_spec(run)
    except MissingSource:
        return None
    if parent.data.get("key") != reference_key(settings, str(spec.get("sha256") or spec.get("ref") or "")):
        return None
    number = run.parent.number if run.parent else "?"
    return f"reused the CUDA reference of run #{number} (same smoke command, build and source)", parent.data


def skip_inline_reference(reference: ReferenceRun) -> None:
    """The reference dispatcher of runs executed in one process (``run_sync``): no CUDA runner takes part."""
    transitions.skip_reference(reference, NOT_RUN_INLINE)


def execute_reference(run_id: int, *, worker: str = "") -> ReferenceRun | None:
    """Claim the run's queued reference, build the untranslated sources with nvcc and run the smoke
    command on this CUDA runner; the final row, or None when another worker had it (or the sweep ended it)."""
    worker = worker or socket.gethostname()
    reference = transitions.claim_reference(run_id, worker)
    if reference is None:
        return None
    stage = Stage.objects.select_related("run", "run__project", "run__archive").get(run_id=run_id, name="smoke")
    with ReferenceLog(reference.pk, run_id, workspace_for(run_id).records / "reference.log") as reference_log:
        state, summary, data = _run_reference(stage, reference_log)
    final = transitions.finish_reference(reference.pk, state, summary, data)
    if final is None:
        log.warning("the reference of run %s was ended by someone else meanwhile; its outcome (%s) is dropped", run_id, state)
        return None
    reference_finished.send(sender=ReferenceRun, reference=final)
    return final


def _run_reference(stage: Stage, reference_log: ReferenceLog) -> tuple[StageState, str, dict[str, object]]:
    try:
        ctx = build_context(stage, reference_log)
        result = run_reference_compiles(ctx) if compile_failed(stage.run_id) else run_reference(ctx)
    except StageCancelled:
        reference_log.write("\n[migrator] cancelled\n")
        return StageState.CANCELLED, "cancelled by user", {}
    except SoftTimeLimitExceeded:
        reference_log.write("\n[migrator] time limit reached\n")
        return StageState.FAILED, "CUDA reference: time limit reached", {}
    except Exception:  # a crash must end as a visible failure, never a reference that stays running
        reference = secrets.token_hex(6)
        log.exception("reference run of run %s crashed (reference id %s)", stage.run_id, reference)
        reference_log.write(f"\n[migrator] internal error (reference id {reference})\n")
        return StageState.FAILED, f"CUDA reference crashed: internal error (reference id {reference})", {}
    summary = str(result.get("summary") or ("CUDA reference ran" if result.get("ok") else "CUDA reference failed"))
    return (StageState.PASSED if result.get("ok") else StageState.FAILED), summary, dict(result)


def next_stage(run_id: int) -> Stage | None:
    """The first stage still queued, provided every stage before it is final."""
    for stage in Stage.objects.filter(run_id=run_id).order_by("position"):
        if stage.state == StageState.QUEUED:
            return stage
        if stage.state not in FINAL_STAGE_STATES:
            return None
    return None


def advance(run_id: int, dispatch: Dispatcher, send_reference: ReferenceDispatcher | None = None,
            build_here: ReferenceDispatcher | None = None) -> Stage | None:
    """Hand the next stage to ``dispatch`` (or record its skip right away when it cannot run here).
    Smoke with a comparison asked for waits until its CUDA reference row is final (``send_reference``
    hands that out). A run that ended with a failed compile gets its CUDA reference build
    (``start_build_reference``; ``build_here`` runs it in this process)."""
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
        queue = queue_for(stage, settings)
        if is_rocm_queue(queue) and reference_requested(stage, settings) and \
                not _reference_settled(run, settings, send_reference):
            return stage  # waits in its row for the CUDA reference
        dispatch(stage, queue)
        return stage
    start_build_reference(run_id, send_reference, build_here)
    return None


def compile_failed(run_id: int) -> bool:
    return Stage.objects.filter(run_id=run_id, name="compile", state=StageState.FAILED).exists()


def start_build_reference(run_id: int, send: ReferenceDispatcher | None, build_here: ReferenceDispatcher | None) -> None:
    """A run that ended with a failed compile: its CUDA reference build, handed to ``build_here`` (the local
    nvcc of a run of the command line), else to a CUDA runner through ``send``; skipped when no CUDA runner
    is online. Nothing when the run has its row already, or a parent's reference build is evidence enough."""
    run = Run.objects.filter(pk=run_id).first()
    if run is None or run.state not in FINAL_RUN_STATES or run.cancel_requested or not compile_failed(run_id):
        return
    existing = ReferenceRun.objects.filter(run_id=run_id).first()
    if existing is not None and (existing.is_final or existing.task_id):
        return
    if existing is None and run_reference_build(run) is not None:
        return  # a parent's reference of the same source and build settings (``projects.causes``)
    reference = transitions.create_reference(run_id)
    if build_here is not None:
        build_here(reference)
    elif send is not None and online_runners("cuda"):
        send(reference)
    elif send is not None:
        transitions.skip_reference(reference, NO_CUDA_RUNNER_ONLINE, {"no_runner": True})


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


def local_nvcc() -> bool:
    """This process may build CUDA references itself: nvcc is on PATH and the installation allows it."""
    return bool(django_settings.MIGRATOR_LOCAL_CUDA_REFERENCE) and shutil.which("nvcc") is not None


def build_reference_inline(reference: ReferenceRun) -> None:
    """The reference dispatcher of a run of the command line with nvcc at hand: its CUDA reference build, here."""
    execute_reference(reference.run_id, worker=f"{socket.gethostname()} (local nvcc)")


def run_sync(run: Run, on_stage: Callable[[Stage], None] = lambda s: None) -> Run:
    """Run every stage in this process, in order (management command, tests)."""

    def dispatch_inline(stage: Stage, queue: str) -> None:
        execute_stage(stage.pk, worker=f"{socket.gethostname()} (inline)", inline=True)

    build_here = build_reference_inline if local_nvcc() else None
    for _ in STAGE_NAMES:
        stage = advance(run.pk, dispatch_inline, skip_inline_reference, build_here)
        if stage is None:
            break
        stage.refresh_from_db()
        on_stage(stage)
    run.refresh_from_db()
    return run
