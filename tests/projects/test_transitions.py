"""Runs and stages move only through migrator.projects.transitions: claims, outcomes, skips, cancels."""
from __future__ import annotations

import pytest

from migrator.projects import transitions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Project
from tests.projects.conftest import new_run, stage_of

pytestmark = pytest.mark.django_db


def test_a_stage_is_claimed_once(archive_project: Project) -> None:
    run = new_run(archive_project)
    fetch = stage_of(run, "fetch")
    assert transitions.claim_stage(fetch.pk, "w1") is True
    assert transitions.claim_stage(fetch.pk, "w2") is False
    fetch.refresh_from_db()
    run.refresh_from_db()
    assert fetch.state == StageState.RUNNING and fetch.worker == "w1"
    assert run.state == RunState.RUNNING and run.started_at is not None


def test_a_failed_stage_skips_the_later_ones_with_the_reason(archive_project: Project) -> None:
    run = new_run(archive_project)
    scan = stage_of(run, "scan")
    for name in ("fetch", "scan"):
        transitions.claim_stage(stage_of(run, name).pk, "w")
    transitions.finish_stage(stage_of(run, "fetch").pk, StageState.PASSED, "ok")
    transitions.finish_stage(scan.pk, StageState.FAILED, "boom")
    run.refresh_from_db()
    later = list(run.stages.filter(position__gt=scan.position))
    assert all(s.state == StageState.SKIPPED and s.summary == "skipped: scan failed" for s in later)
    assert run.state == RunState.FAILED and run.finished_at is not None


def test_finishing_twice_keeps_the_first_outcome(archive_project: Project) -> None:
    run = new_run(archive_project)
    fetch = stage_of(run, "fetch")
    transitions.claim_stage(fetch.pk, "w")
    transitions.finish_stage(fetch.pk, StageState.FAILED, "worker lost")
    transitions.finish_stage(fetch.pk, StageState.PASSED, "late result")
    fetch.refresh_from_db()
    assert fetch.state == StageState.FAILED and fetch.summary == "worker lost"


def test_cancel_cancels_queued_stages_and_the_run(archive_project: Project) -> None:
    run = new_run(archive_project)
    transitions.claim_stage(stage_of(run, "fetch").pk, "w")
    transitions.request_cancel(run)
    assert stage_of(run, "scan").state == StageState.CANCELLED
    transitions.finish_stage(stage_of(run, "fetch").pk, StageState.CANCELLED, "cancelled by user")
    run.refresh_from_db()
    assert run.state == RunState.CANCELLED

