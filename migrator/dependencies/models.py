"""One row per distinct ROCm-side install set: the resolve, its state and its cached result.

The row is keyed by the request's content (``ResolveRequest.key``: the exact ROCm requirements,
constraints, stubs and indexes, the index settings and the counterpart data), so two runs, two
projects or two sets with the same content share one resolve. It exists before its task is
queued and keeps the task id, like a stage row; the sweep sees every state.
"""
from __future__ import annotations

from django.db import models

from migrator.dependencies.constants import FINAL_RESOLVE_STATES, ResolveState


class DependencyResolve(models.Model):
    key = models.CharField(max_length=64, unique=True)
    request = models.JSONField(default=dict)  # ``ResolveRequest.to_dict()``
    state = models.CharField(max_length=10, choices=ResolveState.choices, default=ResolveState.QUEUED)
    result = models.JSONField(default=dict, blank=True)  # ``Resolution.to_dict()`` plus "check"
    summary = models.CharField(max_length=500, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    requested_at = models.DateTimeField()  # the last time a scan asked for it
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["state", "heartbeat_at"], name="resolve_state_heartbeat_idx"),
                   models.Index(fields=["state", "queued_at"], name="resolve_state_queued_idx")]

    def __str__(self) -> str:
        return f"resolve {self.key[:12]} {self.state}"

    @property
    def is_final(self) -> bool:
        return self.state in FINAL_RESOLVE_STATES

    @property
    def duration_s(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None
