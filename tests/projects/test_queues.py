"""One rule says which queues are ROCm runners': the stage property and the SQL filter agree on it."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from migrator.accounts.models import Team
from migrator.projects import actions, transitions
from migrator.projects.models import Stage
from migrator.projects.queues import is_rocm_queue, rocm_queues

QUEUES = {"fetch": "rocm", "scan": "rocm.gfx90a", "hipify": "rocmx", "compile": "cpu", "link": "cuda", "smoke": "rocm_old"}


@pytest.mark.parametrize(("name", "expected"), [
    ("rocm", True), ("rocm.gfx90a", True), ("rocm.gfx942", True),
    ("rocmx", False), ("rocm_old", False), ("cpu", False), ("cuda", False), ("", False),
])
def test_only_the_plain_queue_and_per_target_queues_are_rocm_queues(name: str, expected: bool) -> None:
    assert is_rocm_queue(name) is expected


@pytest.mark.django_db
def test_the_filter_and_the_stage_property_pick_the_same_stages(
    team_user: tuple[User, Team], cuda_archive: bytes
) -> None:
    user, team = team_user
    project = actions.create_project(team, "queues", user=user)
    actions.store_archive(project, SimpleUploadedFile("q.tgz", cuda_archive), "q.tgz", user)
    run = actions.create_run(project, user=user)
    for stage in run.stages.all():
        transitions.mark_enqueued(stage, f"task-{stage.name}", QUEUES[stage.name])
    stages = list(Stage.objects.filter(run=run))
    by_filter = set(Stage.objects.filter(rocm_queues(), run=run).values_list("name", flat=True))
    assert by_filter == {s.name for s in stages if s.waiting_for_rocm_runner} == {"fetch", "scan"}
