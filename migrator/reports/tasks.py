"""Celery wrappers: posting a run's status and report to its pull request; delivering its port (builds: cpu queue)."""
from __future__ import annotations

from celery import shared_task

from migrator.reports import delivery, posting


@shared_task(name="reports.post_run_status", ignore_result=True)
def post_run_status(run_id: int, *, phase: str = "final") -> None:
    posting.post_run_status(run_id, phase=phase)


@shared_task(name="reports.deliver_port", acks_late=True, ignore_result=True)
def deliver_port(run_id: int, branch: str, mode: str = "single-source") -> None:
    delivery.deliver_by_id(run_id, branch, mode)


@shared_task(name="reports.redeliver_port", acks_late=True, ignore_result=True)
def redeliver_port(run_id: int) -> None:
    delivery.redeliver(run_id)
