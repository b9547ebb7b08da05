"""The Celery app as the session's shared test worker runs it: ``celery -A tests.worker_app worker``.

Each task runs under the settings of the test being served (tests/worker_settings.py), applied with
Django's ``override_settings`` as pytest-django's ``settings`` fixture applies them in the test process,
and restored when the task ends. The file is read per task, so one long-lived worker serves tests with
different stage sets and folders; the test process rewrites it only while the worker is idle and its
broker empty (tests/session_worker.py), so a task never runs under another test's settings.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from celery.signals import task_postrun, task_prerun
from django.test.utils import override_settings

from migrator.celery import app
from tests.worker_settings import SETTINGS_FILE_ENV, WorkerSettings

_applied: list[override_settings] = []


@task_prerun.connect
def apply_test_settings(**_: Any) -> None:
    path = os.environ.get(SETTINGS_FILE_ENV)
    current = WorkerSettings.read(Path(path)) if path else None
    if current is None:
        return
    override = override_settings(**current.overrides())
    override.enable()
    _applied.append(override)


@task_postrun.connect
def restore_settings(**_: Any) -> None:
    while _applied:
        _applied.pop().disable()


__all__ = ["app"]
