"""Reactions to stage outcomes that belong to other areas (the error notebook)."""
from __future__ import annotations

import logging

from migrator.projects.models import Stage

log = logging.getLogger(__name__)


def on_stage_finished(stage: Stage) -> None:
    """Match the stage against the error notebook (failures, and passes with warnings)."""
    try:
        from migrator.notebook.matching import match_stage
    except ModuleNotFoundError:
        return
    try:
        match_stage(stage)
    except Exception:  # matching must never turn a recorded result into a crash
        log.exception("notebook matching failed for stage %s", stage.pk)
