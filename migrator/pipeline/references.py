"""The CUDA reference run of a run: a row of its own (``ReferenceRun``), settled before smoke is handed out
when a comparison is asked for, and created as a build-only reference once a run ended with a failed
compile. ``execute_reference`` claims the row and runs it on a CUDA runner (or the local nvcc of a run of
the command line); ``migrator.pipeline.orchestrator`` decides when."""
from __future__ import annotations

import logging
import secrets
import shutil
import socket
from collections.abc import Callable

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings as django_settings

from migrator.pipeline.stagecontext import MissingSource, build_context, source_spec
from migrator.pipeline.stagelog import ReferenceLog
from migrator.projects import transitions
from migrator.projects.causes import run_reference_build
from migrator.projects.constants import FINAL_RUN_STATES, StageState
from migrator.projects.models import ReferenceRun, Run, Stage
from migrator.projects.signals import reference_finished
from migrator.projects.workspaces import workspace_for
from migrator.runners.presence import online_runners
from worker.context import StageCancelled
from worker.project_settings import ProjectSettings
from worker.runner.reference_reuse import reference_key
from worker.stages.smoke import run_reference, run_reference_compiles
from worker.wording import wait_text

log = logging.getLogger(__name__)

ReferenceDispatcher = Callable[[ReferenceRun], None]
CUDA_QUEUE = "cuda"
NO_CUDA_RUNNER_ONLINE = "not run: no CUDA runner online"
NOT_RUN_INLINE = "not run: a run of the command line executes in one process, without a CUDA runner"


def reference_requested(stage: Stage, settings: ProjectSettings) -> bool:
    """A CUDA comparison is asked for: smoke has a command to run and ``smoke_compare_reference`` is on."""
    return stage.name == "smoke" and bool(settings.smoke_command.strip()) and settings.smoke_compare_reference


def no_cuda_runner_within(settings: ProjectSettings) -> str:
    return f"not run: no CUDA runner within {wait_text(settings.smoke_wait_timeout_s)}"


def reference_settled(run: Run, settings: ProjectSettings, send: ReferenceDispatcher | None) -> bool:
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


def local_nvcc() -> bool:
    """This process may build CUDA references itself: nvcc is on PATH and the installation allows it."""
    return bool(django_settings.MIGRATOR_LOCAL_CUDA_REFERENCE) and shutil.which("nvcc") is not None


def build_reference_inline(reference: ReferenceRun) -> None:
    """The reference dispatcher of a run of the command line with nvcc at hand: its CUDA reference build, here."""
    execute_reference(reference.run_id, worker=f"{socket.gethostname()} (local nvcc)")
