"""Runs stages and records their results: the only module that writes stage outcomes.

``execute_stage`` claims a queued stage (conditional update, so redelivery is harmless), builds
the stage's context, calls the stage module, and records the result. ``advance`` decides which
stage comes next and hands it to a dispatcher (Celery in production, a direct call in the
synchronous management command). A stage whose module is not installed is recorded as skipped
with "not available on this installation", never as passed.

The CUDA reference run is a row of its own (``migrator.pipeline.references``). When smoke is next and a comparison is
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
import socket
import time
from collections.abc import Callable
from types import ModuleType

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings as django_settings

from migrator.pipeline.references import (
    ReferenceDispatcher,
    build_reference_inline,
    local_nvcc,
    reference_requested,
    reference_settled,
    skip_inline_reference,
    start_build_reference,
)
from migrator.pipeline.stagecontext import MissingSource, build_context
from migrator.pipeline.stagelog import StageLog
from migrator.projects import transitions
from migrator.projects.constants import (
    FINAL_RUN_STATES,
    FINAL_STAGE_STATES,
    NOT_AVAILABLE,
    PYTORCH_QUEUE,
    STAGE_NAMES,
    StageState,
)
from migrator.projects.models import Run, Stage
from migrator.projects.queues import is_rocm_queue
from migrator.projects.signals import run_finished, stage_finished
from migrator.runners.presence import pytorch_runner_online, smoke_queue
from worker.context import StageCancelled, StageResult
from worker.project_settings import ProjectSettings, SettingsError
from worker.toolchain.sandbox import isolation_notes

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
                not reference_settled(run, settings, send_reference):
            return stage  # waits in its row for the CUDA reference
        dispatch(stage, queue)
        return stage
    start_build_reference(run_id, send_reference, build_here)
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

    build_here = build_reference_inline if local_nvcc() else None
    for _ in STAGE_NAMES:
        stage = advance(run.pk, dispatch_inline, skip_inline_reference, build_here)
        if stage is None:
            break
        stage.refresh_from_db()
        on_stage(stage)
    run.refresh_from_db()
    return run
