"""Reactions to stage outcomes that belong to other areas (the error notebook)."""
from __future__ import annotations

import logging
from contextvars import ContextVar

from migrator.projects.models import Stage

log = logging.getLogger(__name__)
# Set by worker.pipeline.run_sync: every stage runs in this process, one after the other.
RUNNING_INLINE: ContextVar[bool] = ContextVar("running_inline", default=False)


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
    """Inline when the whole pipeline runs in this process; otherwise a task of its own, so the
    next stage is not held up by it."""
    try:
        from migrator.review import tasks
    except ModuleNotFoundError:
        return
    if RUNNING_INLINE.get():
        tasks.warm_run_now(stage.run_id)
    else:
        tasks.warm_review_cache.apply_async(args=[stage.run_id], queue="cpu")
