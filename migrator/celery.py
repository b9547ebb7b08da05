"""The Celery application; configuration is read from Django settings (CELERY_* names)."""
from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "migrator.settings")

app = Celery("migrator")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # the tasks modules of the installed Django apps (the pipeline's among them)
