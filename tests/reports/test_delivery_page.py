"""The delivery page and API of a run: both modes' changes from the run's own trees, deliveries with both
builds and a conflict's two versions, the deliver action queued for a worker."""
from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.api.models import create_token
from migrator.projects.models import Run
from migrator.reports import tasks
from migrator.reports.models import PortAttempt, PortDelivery, PortState
from tests.reports.team_repo import team_repo

FIXTURES = Path(__file__).parent.parent / "fixtures" / "delivery"
pytestmark = pytest.mark.django_db


@pytest.fixture
def run(tmp_path: Path, team_user: tuple[User, Team], only_stages: Callable[..., None], settings: Settings) -> Run:
    """A finished run of the Makefile fixture from a local repository, translated (fetch, scan, hipify)."""
    settings.MIGRATOR_ALLOW_LOCAL_GIT = True
    only_stages("fetch", "scan", "hipify")
    repo = team_repo(tmp_path, FIXTURES / "make_histogram")
    try:
        call_command("migrate_repo", repo.url, "--ref", "main", "--project", "hist", "--team", team_user[1].name,
                     stdout=io.StringIO(), stderr=io.StringIO())
    except SystemExit:
        pass
    return Run.objects.get()


def _signed_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def test_the_page_shows_both_modes_and_a_conflict_with_both_versions(
    run: Run, client: Client, team_user: tuple[User, Team]
) -> None:
    record = PortDelivery.objects.create(project=run.project, target_branch="main", branch="port/rocm")
    PortAttempt.objects.create(
        run=run, delivery=record, state=PortState.CUDA_BROKEN, commit="a" * 40,
        rocm={"side": "rocm", "status": "passed", "reason": "built with make -C"},
        cuda={"side": "cuda", "status": "failed", "reason": "make exited with status 2"},
        conflicts=[{"path": "Makefile", "regenerated": "NVCCFLAGS ?= -O3", "hand": "NVCCFLAGS ?= -O2 -g",
                    "against": "regenerated edit"}])
    run_page = _signed_in(client, team_user[0]).get(run.get_absolute_url()).content.decode()
    assert f'href="/runs/{run.pk}/delivery#attempt-' in run_page and "1 conflict with hand edits" in run_page
    page = client.get(f"/runs/{run.pk}/delivery").content.decode()
    assert "Not proposed: the CUDA build fails on the delivered branch" in page
    assert "make exited with status 2" in page
    assert "<pre>NVCCFLAGS ?= -O2 -g</pre>" in page and "<pre>NVCCFLAGS ?= -O3</pre>" in page
    single, copy = page.index('id="preview-single-source"'), page.index('id="preview-copy"')
    assert "rocm/hip.mk" in page[single:copy] and "histogram.cu" not in page[single:copy]  # sources untouched
    assert "histogram.cu" in page[copy:] and "+#include &lt;hip/hip_runtime.h&gt;" in page[copy:]


def test_the_deliver_form_and_the_api_queue_the_delivery(
    run: Run, client: Client, team_user: tuple[User, Team], monkeypatch: pytest.MonkeyPatch
) -> None:
    queued: list[tuple[int, str, str]] = []
    monkeypatch.setattr(tasks.deliver_port, "apply_async",
                        lambda args, queue: queued.append((args[0], args[1], args[2])))
    signed_in = _signed_in(client, team_user[0])
    assert signed_in.post(f"/runs/{run.pk}/delivery/deliver", {"branch": "-x", "mode": "copy"}).status_code == 302
    assert queued == []  # a branch git would read as an option
    signed_in.post(f"/runs/{run.pk}/delivery/deliver", {"branch": "port/rocm", "mode": "copy"})
    api = Client(HTTP_AUTHORIZATION=f"Bearer {create_token(team_user[1], 'ci')[1]}")
    answer = api.post(f"/api/v1/runs/{run.pk}/deliver", {"branch": "port/amd"}, content_type="application/json")
    assert answer.status_code == 202
    assert queued == [(run.pk, "port/rocm", "copy"), (run.pk, "port/amd", "single-source")]
    assert api.get(f"/api/v1/runs/{run.pk}/deliveries").json() == []
