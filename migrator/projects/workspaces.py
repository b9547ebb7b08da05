"""Where a run's files live: one workspace folder per run under ``MIGRATOR_WORKSPACE_ROOT``."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from worker.context import Workspace


def workspace_for(run_id: int) -> Workspace:
    return Workspace(Path(settings.MIGRATOR_WORKSPACE_ROOT) / "runs" / str(run_id))


def project_cache_dir(project_id: int) -> Path:
    """Files a project's runs share (translation caches, reference builds)."""
    return Path(settings.MIGRATOR_CACHE_ROOT) / "projects" / str(project_id)
