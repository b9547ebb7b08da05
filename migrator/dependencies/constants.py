"""States of a dependency resolve and the queue it runs on."""
from __future__ import annotations

from django.db import models

DEPS_QUEUE = "deps"  # its own Celery queue, served by its own worker: never the CPU queue compiles use
RESOLVE_TASK = "dependencies.resolve"
SWEEP_TASK = "dependencies.sweep"
MAX_ATTEMPTS = 2  # a resolve whose worker died is queued once more, then failed


class ResolveState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Resolving"
    DONE = "done", "Done"  # pip answered: resolved, partial or a conflict (a conflict is a result)
    FAILED = "failed", "Failed"  # no answer: index unreachable, time limit, worker lost; asked again by the next run


FINAL_RESOLVE_STATES = (ResolveState.DONE, ResolveState.FAILED)
