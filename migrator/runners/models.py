"""Workers and GPU runners as they report themselves through heartbeats."""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


class Runner(models.Model):
    class Profile(models.TextChoices):
        CPU = "cpu", "CPU worker"
        ROCM = "rocm", "ROCm runner"
        CUDA = "cuda", "CUDA reference runner"

    name = models.CharField(max_length=200, unique=True)
    profile = models.CharField(max_length=10, choices=Profile.choices)
    queues = models.JSONField(default=list)
    info = models.JSONField(default=dict)  # host, toolchain, GPUs as last reported
    started_at = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["profile", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def online(self) -> bool:
        return self.last_seen >= timezone.now() - timedelta(seconds=settings.MIGRATOR_RUNNER_OFFLINE_S)
