"""Celery wrapper for posting a run's status and report to its pull request."""
from __future__ import annotations

from celery import shared_task

from migrator.reports import posting


@shared_task(name="reports.post_run_status", ignore_result=True)
def post_run_status(run_id: int, *, phase: str = "final") -> None:
    posting.post_run_status(run_id, phase=phase)
