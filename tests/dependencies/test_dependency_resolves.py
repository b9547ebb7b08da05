"""Resolve rows: requested by a scan, queued once per distinct content, claimed once, cached, swept."""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from pytest_django import Settings

from migrator.dependencies import actions, sweep
from migrator.dependencies.constants import DEPS_QUEUE, ResolveState
from migrator.dependencies.models import DependencyResolve
from tests.pytorch_projects.simple_index import SimpleIndex
from worker.scanning.dep_report import build_report
from worker.scanning.pytorch_scan import resolve_options_from_env

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parents[1] / "pytorch_projects" / "fixtures"


def _requests() -> dict[str, dict[str, Any]]:
    options = resolve_options_from_env()
    assert options is not None
    return dict(build_report(FIXTURES / "tunefactory", (), options, "7.2").requests())


def test_a_scan_queues_one_resolve_per_distinct_set_and_the_next_run_reuses_them(
    local_index: SimpleIndex, monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Callable[..., AbstractContextManager[list[Callable[[], None]]]],
) -> None:
    sent: list[tuple[str, str]] = []
    monkeypatch.setattr("celery.current_app.send_task", lambda name, args, queue, task_id: sent.append((queue, task_id)))
    requests = _requests()
    assert 10 <= len(requests) < 19  # 19 sets, some with the same ROCm side (one resolve for both)
    with django_capture_on_commit_callbacks(execute=True):
        rows = actions.request_resolves(requests)
    assert len(rows) == len(requests) == DependencyResolve.objects.count()
    assert {row.state for row in DependencyResolve.objects.all()} == {ResolveState.QUEUED}
    assert sorted(sent) == sorted((DEPS_QUEUE, row.task_id) for row in DependencyResolve.objects.all())
    with django_capture_on_commit_callbacks(execute=True):
        actions.request_resolves(requests)  # a second run with the same declarations
    assert len(sent) == len(requests) and DependencyResolve.objects.count() == len(requests)


def test_a_resolve_runs_once_is_cached_and_a_failed_one_is_asked_again(
    local_index: SimpleIndex, monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    monkeypatch.setattr(actions, "publish", lambda resolve_id, task_id="": None)
    key, request = next((k, r) for k, r in _requests().items()
                        if "liger-kernel>=0.6.3" in r["requirements"] and r["extra_indexes"])
    [row] = actions.request_resolves({key: request})
    done = actions.execute_resolve(row.pk, worker="w1")
    assert done is not None and done.state == ResolveState.DONE and done.worker == "w1"
    assert done.result["status"] == "partial", done.result  # pyproject.toml [full]: DeepSpeed is a source archive
    assert done.result["no_wheel"] == ["deepspeed<=0.18.4,>=0.14.0"]
    versions = {p["name"]: p["version"] for p in done.result["packages"]}
    assert versions["torch"] == "2.14.1+rocm7.2" and "nvidia-cublas-cu12" not in versions
    assert done.result["check"]["problems"][0].startswith("triton 3.8.0 from PyPI (pulled in by liger-kernel)")
    assert actions.execute_resolve(row.pk, worker="w2") is None  # delivered twice: resolved once
    actions.request_resolves({key: request})
    assert DependencyResolve.objects.get(pk=row.pk).state == ResolveState.DONE  # cached
    DependencyResolve.objects.filter(pk=row.pk).update(finished_at=timezone.now() - timedelta(days=8))
    actions.request_resolves({key: request})
    assert DependencyResolve.objects.get(pk=row.pk).state == ResolveState.QUEUED  # expired: asked again
    DependencyResolve.objects.filter(pk=row.pk).update(state=ResolveState.FAILED)
    actions.request_resolves({key: request})
    assert DependencyResolve.objects.get(pk=row.pk).state == ResolveState.QUEUED


def test_an_unreachable_index_fails_the_resolve_not_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGRATOR_PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setattr(actions, "publish", lambda resolve_id, task_id="": None)
    (tmp_path / "requirements.txt").write_text("numpy\n")
    options = resolve_options_from_env()
    assert options is not None
    [row] = actions.request_resolves(build_report(tmp_path, (), options).requests())
    failed = actions.execute_resolve(row.pk, worker="w1")
    assert failed is not None and failed.state == ResolveState.FAILED
    assert failed.summary.startswith("unreachable: the package index could not be reached")


def _row(state: ResolveState, **fields: object) -> DependencyResolve:
    return DependencyResolve.objects.create(key=f"{DependencyResolve.objects.count():064d}", request={"requirements": []},
                                            state=state, requested_at=timezone.now(), **fields)


def test_the_sweep_requeues_a_resolve_whose_worker_died_then_fails_it(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[int] = []
    monkeypatch.setattr(actions, "publish", lambda resolve_id, task_id="": published.append(resolve_id))
    monkeypatch.setattr(sweep, "pending_task_ids", lambda queues, taken_within_s: set())
    old = timezone.now() - timedelta(seconds=settings.MIGRATOR_HEARTBEAT_STALE_S + 5)
    first = _row(ResolveState.RUNNING, heartbeat_at=old, attempts=1, worker="gone", queued_at=timezone.now())
    second = _row(ResolveState.RUNNING, heartbeat_at=old, attempts=2, worker="gone", queued_at=timezone.now())
    alive = _row(ResolveState.RUNNING, heartbeat_at=timezone.now(), attempts=1, worker="here")
    sweep.sweep()
    for row in (first, second, alive):
        row.refresh_from_db()
    assert first.state == ResolveState.QUEUED and published == [first.pk]
    assert second.state == ResolveState.FAILED and second.summary.startswith("worker lost")
    assert alive.state == ResolveState.RUNNING


def test_the_sweep_publishes_lost_messages_and_fails_resolves_no_worker_takes(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[tuple[int, str]] = []
    monkeypatch.setattr(actions, "publish", lambda resolve_id, task_id="": published.append((resolve_id, task_id)))
    now = timezone.now()
    lost = _row(ResolveState.QUEUED, task_id="t-lost", queued_at=now - timedelta(seconds=60))
    waiting = _row(ResolveState.QUEUED, task_id="t-waiting", queued_at=now - timedelta(seconds=60))
    stuck = _row(ResolveState.QUEUED, task_id="t-stuck",
                 queued_at=now - timedelta(seconds=settings.MIGRATOR_QUEUE_TIMEOUT_S + 5))
    monkeypatch.setattr(sweep, "pending_task_ids", lambda queues, taken_within_s: {"t-waiting"})
    sweep.sweep(now)
    assert published == [(lost.pk, "t-lost")]
    stuck.refresh_from_db()
    waiting.refresh_from_db()
    assert stuck.state == ResolveState.FAILED and "is a worker for the deps queue running?" in stuck.summary
    assert waiting.state == ResolveState.QUEUED
