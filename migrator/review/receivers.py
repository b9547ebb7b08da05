"""Review's reaction to a finished compile stage: cache the run's file diffs for the review pages.

Inline when the whole run executes in this process (the signal says so); otherwise a task of its
own on the cpu queue, so the next stage is not held up by it.
"""
from __future__ import annotations

import logging
from typing import Any

from django.dispatch import receiver

from migrator.projects.models import Stage
from migrator.projects.signals import stage_finished
from migrator.review import tasks

log = logging.getLogger(__name__)


@receiver(stage_finished, dispatch_uid="review.warm_diffs_after_compile")
def warm_diffs_after_compile(sender: type[Stage], stage: Stage, inline: bool = False, **_: Any) -> None:
    if stage.name != "compile":
        return
    if inline:
        tasks.warm_run_now(stage.run_id)
        return
    try:
        tasks.warm_review_cache.apply_async(args=[stage.run_id], queue="cpu")
    except Exception:  # a cold cache only costs the first reader time; never fail the stage for it
        log.exception("could not queue warming the review cache of run %s", stage.run_id)
