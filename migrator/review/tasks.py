"""Celery wrapper: cache a run's review diffs once compile has finished."""
from __future__ import annotations

import logging

from celery import shared_task

from migrator.projects.models import Run
from migrator.review.warming import warm_run

log = logging.getLogger(__name__)


def warm_run_now(run_id: int) -> None:
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        return
    try:
        warm_run(run)
    except Exception:  # a cold cache only costs the first reader time; never fail anything for it
        log.exception("warming the review cache of run %s failed", run_id)


@shared_task(name="review.warm_review_cache", ignore_result=True)
def warm_review_cache(run_id: int) -> None:
    warm_run_now(run_id)
