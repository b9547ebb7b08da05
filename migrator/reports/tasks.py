"""Celery wrappers: posting a run's status and report to its pull request; delivering its port (builds: cpu
queue; the CUDA side on a CUDA runner: cuda queue)."""
from __future__ import annotations

from celery import Task, shared_task

from migrator.reports import delivery, delivery_cuda, posting


@shared_task(name="reports.post_run_status", ignore_result=True)
def post_run_status(run_id: int, *, phase: str = "final") -> None:
    posting.post_run_status(run_id, phase=phase)


@shared_task(name="reports.deliver_port", acks_late=True, ignore_result=True)
def deliver_port(run_id: int, branch: str, mode: str = "single-source") -> None:
    delivery.deliver_by_id(run_id, branch, mode)


@shared_task(name="reports.redeliver_port", acks_late=True, ignore_result=True)
def redeliver_port(run_id: int) -> None:
    delivery.redeliver(run_id)


@shared_task(name="reports.verify_port_cuda", acks_late=True, ignore_result=True, bind=True)
def verify_port_cuda(self: Task, attempt_id: int) -> None:
    """The CUDA side of a delivery, on the ``cuda`` queue: the reference path over the delivered branch."""
    delivery_cuda.check_cuda_side(attempt_id, worker=str(self.request.hostname or ""))


@shared_task(name="reports.offer_port", acks_late=True, ignore_result=True)
def offer_port(attempt_id: int) -> None:
    """Push and propose a delivery whose CUDA check passed on a runner (``cpu`` queue: the host credentials)."""
    delivery.offer_verified(attempt_id)


@shared_task(name="reports.sweep_port_cuda_checks", ignore_result=True)
def sweep_port_cuda_checks() -> None:
    delivery_cuda.sweep_cuda_checks()
