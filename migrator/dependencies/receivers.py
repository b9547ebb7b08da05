"""The dependencies app's reaction to a finished scan: queue the resolves its install sets need.

The scan records each set's ROCm-side request with its key; nothing of the resolve runs in the
scan or delays the next stage. Runs of ``migrate_repo`` (``inline``) resolve right here, since
everything of theirs runs in their one process.
"""
from __future__ import annotations

import logging
from typing import Any

from django.dispatch import receiver

from migrator.dependencies.actions import request_resolves
from migrator.projects.constants import StageState
from migrator.projects.models import Stage
from migrator.projects.signals import stage_finished

log = logging.getLogger(__name__)


@receiver(stage_finished, dispatch_uid="dependencies.queue_resolves")
def queue_resolves(sender: type[Stage], stage: Stage, inline: bool = False, **_: Any) -> None:
    if stage.name != "scan" or stage.state != StageState.PASSED or not isinstance(stage.data, dict):
        return
    requests = stage.data.get("dependency_requests")
    if not isinstance(requests, dict) or not requests:
        return
    try:
        request_resolves(requests, inline=inline)
    except Exception:  # a failure here must not change the scan's recorded outcome
        log.exception("could not queue the dependency resolves of run %s", stage.run_id)
