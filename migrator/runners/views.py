from __future__ import annotations

import shutil
from pathlib import Path

from django.conf import settings as django_settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from migrator.projects.access import projects_for
from migrator.projects.constants import PYTORCH_QUEUE, StageState
from migrator.projects.models import Run, Stage
from migrator.projects.queues import rocm_queues
from migrator.runners.models import Runner


@login_required
@require_GET
def runner_list(request: HttpRequest) -> HttpResponse:
    runners = list(Runner.objects.all())
    running = Stage.objects.filter(state=StageState.RUNNING).select_related("run", "run__project")
    by_worker: dict[str, list[Stage]] = {}
    for stage in running:
        by_worker.setdefault(stage.worker, []).append(stage)
    visible = set(projects_for(request.user).values_list("pk", flat=True))
    rows = [(runner, by_worker.get(runner.name, [])) for runner in runners]
    waiting_rocm = Stage.objects.filter(rocm_queues(), state=StageState.QUEUED, queued_at__isnull=False).count()
    rocm_online = [r for r in runners if r.profile == Runner.Profile.ROCM and r.online]
    pytorch_online = [r for r in rocm_online if PYTORCH_QUEUE in r.queues]
    context = {"rows": rows, "waiting_rocm": waiting_rocm, "visible": visible, "detection": detection_times(),
               "rocm_online": rocm_online, "pytorch_online": pytorch_online, "disk": workspace_disk()}
    return render(request, "runners/list.html", context)


def workspace_disk() -> dict[str, object]:
    """Used and free space of the filesystem holding the workspaces, and how long files are kept."""
    root = Path(django_settings.MIGRATOR_WORKSPACE_ROOT)
    while not root.exists() and root != root.parent:  # not made yet: the filesystem it will be on
        root = root.parent
    usage = shutil.disk_usage(root)
    return {"total": usage.total, "used": usage.used, "free": usage.free,
            "percent": round(100 * usage.used / usage.total) if usage.total else 0,
            "runs_with_files": Run.objects.filter(files_expired_at__isnull=True).count(),
            "work_hours": django_settings.MIGRATOR_WORK_RETENTION_H,
            "run_days": django_settings.MIGRATOR_RUN_RETENTION_DAYS}


def detection_times() -> dict[str, int]:
    """How long a dead worker's stage stays "running" at most: the heartbeat limit, plus up to one
    sweep interval before the sweep looks again."""
    stale = int(django_settings.MIGRATOR_HEARTBEAT_STALE_S)
    sweep = int(django_settings.MIGRATOR_SWEEP_INTERVAL_S)
    return {"stale_s": stale, "sweep_s": sweep, "worst_s": stale + sweep}
