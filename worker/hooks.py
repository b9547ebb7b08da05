"""Reactions to stage outcomes that belong to other areas (the error notebook)."""
from __future__ import annotations

import logging

from migrator.projects.models import Stage

log = logging.getLogger(__name__)


def on_stage_finished(stage: Stage) -> None:
    """Match the stage against the error notebook (failures, and passes with warnings); once
    compile has finished, cache the run's file diffs for the review pages."""
    if stage.name == "compile":
        _warm_diffs(stage)
    try:
        from migrator.notebook.matching import match_stage
    except ModuleNotFoundError:
        return
    try:
        match_stage(stage)
    except Exception:  # matching must never turn a recorded result into a crash
        log.exception("notebook matching failed for stage %s", stage.pk)


def _warm_diffs(stage: Stage) -> None:
    try:
        from migrator.review.diffcache import warm_run
    except ModuleNotFoundError:
        return
    try:
        warm_run(stage.run)
    except Exception:  # a cold cache only costs the first reader time; never fail a run for it
        log.exception("warming the diffs of run %s failed", stage.run_id)
