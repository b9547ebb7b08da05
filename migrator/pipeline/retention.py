"""The retention sweep: finished runs give their disk back.

- the work area (``work/`` and its volume image ``work.img``: build outputs, scratch files) of a run
  finished more than ``MIGRATOR_WORK_RETENTION_H`` hours ago is removed; the translated tree, the
  source and the records stay, so its pages, diffs and downloads keep working;
- the whole workspace of a run finished more than ``MIGRATOR_RUN_RETENTION_DAYS`` days ago is removed;
  its page then says its files expired and its review pages and downloads answer "expired" (410).
  Logs, stage data and reports live in the database and stay.

Each removal is recorded on the run (``work_removed_at``, ``files_expired_at``) before the next
one starts, so a crash mid-sweep only repeats a removal. A run that is not final is never touched.
0 for either setting keeps that kind of file forever.
"""
from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings as django_settings
from django.db.models import QuerySet
from django.utils import timezone

from migrator.projects.constants import FINAL_RUN_STATES
from migrator.projects.models import Run
from migrator.projects.workspaces import workspace_for
from worker.toolchain.volume import remove_work
from worker.toolchain.work import all_work_paths

log = logging.getLogger(__name__)
RETENTION_BATCH = 100


@dataclass
class RetentionPass:
    work_removed: list[int]  # run ids
    files_expired: list[int]


def sweep_retention(now: datetime | None = None) -> RetentionPass:
    """One pass over at most ``RETENTION_BATCH`` runs of each kind (the next pass takes the rest)."""
    now = now or timezone.now()
    done = RetentionPass([], [])
    days = int(django_settings.MIGRATOR_RUN_RETENTION_DAYS)
    if days:
        done.files_expired = _each(_finished_before(now - timedelta(days=days)).filter(files_expired_at__isnull=True),
                                   _expire_files, now)
    hours = int(django_settings.MIGRATOR_WORK_RETENTION_H)
    if hours:
        due = _finished_before(now - timedelta(hours=hours)).filter(work_removed_at__isnull=True)
        done.work_removed = _each(due, _remove_work, now)
    return done


def _finished_before(moment: datetime) -> QuerySet[Run]:
    return Run.objects.filter(state__in=FINAL_RUN_STATES, finished_at__lt=moment).order_by("finished_at")


def _each(runs: QuerySet[Run], action: Callable[[Run, datetime], None], now: datetime) -> list[int]:
    changed = []
    for run in _batch(runs):
        try:
            action(run, now)
        except Exception:  # one run whose files cannot be removed must not stop the others
            log.exception("retention: the files of run %s could not be removed; the next pass tries again", run.pk)
            continue
        changed.append(run.pk)
    return changed


def _batch(runs: QuerySet[Run]) -> Iterable[Run]:
    return list(runs.only("pk", "state", "finished_at", "work_removed_at")[:RETENTION_BATCH])


def _remove_work(run: Run, now: datetime) -> None:
    for folder, image in all_work_paths(workspace_for(run.pk).root):
        remove_work(folder, image)
    Run.objects.filter(pk=run.pk, work_removed_at__isnull=True).update(work_removed_at=now)


def _expire_files(run: Run, now: datetime) -> None:
    root = workspace_for(run.pk).root
    for folder, image in all_work_paths(root):
        remove_work(folder, image)  # a volume a dead worker left mounted is unmounted first
    if root.is_symlink():
        root.unlink()
    elif root.exists():
        shutil.rmtree(root)  # fd-based on Linux: links a build planted are removed, never followed
    Run.objects.filter(pk=run.pk).update(files_expired_at=now, work_removed_at=run.work_removed_at or now)
