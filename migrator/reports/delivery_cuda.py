"""The CUDA side of a delivery on a CUDA runner: ``check_cuda_side``, the ``cuda`` queue's half.

``deliver_run`` verifies the ROCm side itself; when a CUDA runner is online it records the attempt as
``VERIFYING`` and queues this. The runner claims the attempt (a conditional update, so a redelivered
message does nothing twice), builds the delivered tree by the CUDA reference path and compares its smoke
output with the original's (``worker.delivery.cuda_check``), records the result, and then either marks
the attempt ``CUDA_BROKEN`` (never pushed nor proposed) or hands it back to the ``cpu`` queue to be
offered (``reports.offer_port``): credentials for the team's host never reach a CUDA runner.
``sweep_cuda_checks`` (a periodic task) sends a check that waited ``MIGRATOR_PORT_CUDA_CHECK_WAIT_S``
unclaimed again, ends it "not checked" when no CUDA runner is online, and ends one that ran twice as long
"runner lost"; such an attempt is never pushed.
"""
from __future__ import annotations

import logging
import socket
from datetime import timedelta

from celery import current_app
from django.conf import settings as django_settings
from django.utils import timezone

from migrator.projects.workspaces import workspace_for
from migrator.reports.models import PortAttempt, PortState
from migrator.runners.presence import online_runners
from worker.contained import load_json_beneath
from worker.delivery.cuda_check import check_on_cuda_runner
from worker.delivery.verify import SideResult
from worker.project_settings import ProjectSettings
from worker.stages.smoke import reference_stdout
from worker.stages.smoke_presets import REFERENCE_ARTIFACT

log = logging.getLogger(__name__)
RECORD_LIMIT = 64 * 1024 * 1024


def check_cuda_side(attempt_id: int, *, worker: str = "") -> PortAttempt | None:
    claimed = PortAttempt.objects.filter(pk=attempt_id, state=PortState.VERIFYING, cuda__status="queued").update(
        cuda={"side": "cuda", "status": "running", "reason": "building on a CUDA runner", "via": "cuda runner"})
    if not claimed:
        return None
    attempt = PortAttempt.objects.select_related("run", "delivery").get(pk=attempt_id)
    run = attempt.run
    workspace = workspace_for(run.pk)
    tree = workspace.root / "delivery" / attempt.delivery.mode / "tree"
    settings = ProjectSettings.stored_or_default(run.settings_used)
    name = worker or socket.gethostname()
    try:
        result = check_on_cuda_runner(tree, workspace, settings, name, _original_output(run.pk),
                                      lambda text: None)
    except Exception:  # a crash ends as a visible failure, never an attempt that stays "running"
        log.exception("the CUDA check of delivery attempt %s crashed", attempt_id)
        result = SideResult("cuda", "failed", "the CUDA check crashed on the runner (see its log)", via=f"cuda runner {name}")
    attempt.cuda = result.to_dict()
    if result.status != "passed":
        attempt.state, attempt.pending = PortState.CUDA_BROKEN, {}
        attempt.save(update_fields=["cuda", "state", "pending"])
        return attempt
    attempt.save(update_fields=["cuda"])
    queue_offer(attempt.pk)
    return attempt


def queue_offer(attempt_id: int) -> None:
    """Back to the ``cpu`` queue, which holds the host credentials, to push and propose."""
    current_app.send_task("reports.offer_port", args=[attempt_id], queue="cpu")


def _original_output(run_id: int) -> str | None:
    """The run's own CUDA reference output (made for its settings, smoke command included), when it ran as
    expected; else None and the runner makes one from the original the same way."""
    found = load_json_beneath(workspace_for(run_id).records, REFERENCE_ARTIFACT, limit=RECORD_LIMIT)
    if found is None or found.get("run_id") != run_id:
        return None  # none, or a parent run's copy (made for other settings, perhaps)
    return reference_stdout(dict(found))


def sweep_cuda_checks() -> dict[str, int]:
    """Stale CUDA checks: sent again, or ended without pushing anything. Counts of each, for the log."""
    wait = timedelta(seconds=django_settings.MIGRATOR_PORT_CUDA_CHECK_WAIT_S)
    now = timezone.now()
    done = {"sent_again": 0, "not_checked": 0, "runner_lost": 0}
    stale = PortAttempt.objects.filter(state=PortState.VERIFYING, created_at__lt=now - wait)
    online = bool(online_runners("cuda"))
    for attempt in stale.filter(cuda__status="queued"):
        if online:
            queue_cuda_check(attempt.pk)
            done["sent_again"] += 1
        elif _end(attempt.pk, "queued", "no CUDA runner took the check: the CUDA side was not checked"):
            done["not_checked"] += 1
    for attempt in stale.filter(cuda__status="running", created_at__lt=now - 2 * wait):
        if _end(attempt.pk, "running", "the CUDA runner was lost during the check"):
            done["runner_lost"] += 1
    return done


def queue_cuda_check(attempt_id: int) -> None:
    """Hand the CUDA side to the ``cuda`` queue (``reports.verify_port_cuda``, by name: tasks import this module)."""
    current_app.send_task("reports.verify_port_cuda", args=[attempt_id], queue="cuda")


def _end(attempt_id: int, status: str, why: str) -> bool:
    """End the attempt FAILED (nothing pushed) if it is still where the sweep saw it."""
    cuda = {"side": "cuda", "status": "failed", "reason": why, "via": "cuda runner"}
    return bool(PortAttempt.objects.filter(pk=attempt_id, state=PortState.VERIFYING, cuda__status=status).update(
        state=PortState.FAILED, cuda=cuda, pending={}, error=f"not offered: {why}"[:500]))
