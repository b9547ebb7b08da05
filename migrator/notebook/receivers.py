"""The notebook's reaction to finished stages: match them against the entries (failures, and passes
with warnings), fingerprinting the error lines no entry explains."""
from __future__ import annotations

import logging
from typing import Any

from django.dispatch import receiver

from migrator.notebook.matching import match_stage
from migrator.projects.models import Stage
from migrator.projects.signals import stage_finished

log = logging.getLogger(__name__)


@receiver(stage_finished, dispatch_uid="notebook.match_finished_stage")
def match_finished_stage(sender: type[Stage], stage: Stage, **_: Any) -> None:
    try:
        match_stage(stage)
    except Exception:  # matching must never turn a recorded result into a crash
        log.exception("notebook matching failed for stage %s", stage.pk)
