"""Results from a fake GPU never pass for real ones: refused in production, labelled everywhere."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.api.models import create_token
from migrator.integrations.models import ProjectIntegration
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.constants import RunState
from migrator.projects.verdict import FAKE_GPU, run_verdict
from migrator.projects.workspaces import workspace_for
from migrator.reports.build import build_report, render_markdown
from migrator.reports.posting import post_run_status
from tests.conftest import make_build_dir
from tests.reports.fake_host import FakeHost

ROOT = Path(__file__).resolve().parents[2]
PRINT_SUM = "python3 -c \"print('sum = 42.0')\""
SHA = "b" * 40


def _start(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MIGRATOR_")}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from django.conf import settings; print(settings.MIGRATOR_FAKE_GPUS)"],
        cwd=ROOT, env={**clean, "DJANGO_SETTINGS_MODULE": "migrator.settings", **env},
        capture_output=True, text=True, timeout=120, check=False,
    )


def test_a_production_process_refuses_to_start_with_fake_gpus() -> None:
    refused = _start({"MIGRATOR_FAKE_GPUS": "gfx90a"})
    assert refused.returncode != 0
    assert "MIGRATOR_FAKE_GPUS is set ('gfx90a') but fake GPUs are only for tests and demos" in refused.stderr
    demo = _start({"MIGRATOR_FAKE_GPUS": "gfx90a", "MIGRATOR_MODE": "demo"})
    assert demo.returncode == 0 and demo.stdout.strip() == "gfx90a"
    assert "MIGRATOR_MODE must be one of" in _start({"MIGRATOR_MODE": "staging"}).stderr


@pytest.fixture
def host() -> Iterator[FakeHost]:
    fake = FakeHost().start()
    yield fake
    fake.stop()


@pytest.mark.django_db
def test_a_smoke_run_on_a_fake_gpu_is_labelled_in_every_output(
    team_user: tuple[User, Team],
    only_stages: Callable[..., None],
    cuda_archive: bytes,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    host: FakeHost,
    client: Client,
    settings: Settings,
) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a")
    monkeypatch.setenv("MIGRATOR_GPU_LOCK_DIR", str(tmp_path / "locks"))
    settings.MIGRATOR_HOST_BACKOFF_S = 0.01
    settings.MIGRATOR_ALLOWED_HOST_API_BASES = [host.url]  # the local fake, as an administrator would allow it
    settings.MIGRATOR_HOST_API_TRUSTED_NETWORKS = ["127.0.0.0/8"]
    only_stages("fetch", "smoke")
    project = actions.create_project(team_user[1], "demo", user=None)
    project.settings = {"smoke_command": PRINT_SUM, "smoke_compare_reference": False}
    project.save()
    ProjectIntegration.objects.create(project=project, host_token="tok", host_api_url=host.url, repository="acme/demo")
    archive = actions.store_archive(project, io.BytesIO(cuda_archive), "demo.tar.gz", None)
    run = actions.create_run(project, user=None, archive=archive, pr_url="https://github.com/acme/demo/pull/3", commit_sha=SHA)
    make_build_dir(workspace_for(run.pk))  # what link would leave; the smoke command runs there
    run = run_sync(run)
    smoke = run.stages.get(name="smoke")
    assert smoke.state == "passed" and smoke.summary.startswith("[fake GPU] exit 0")
    assert smoke.data["fake_gpu"] is True
    assert run.state == RunState.PARTIAL and ("smoke", FAKE_GPU) in [(u.stage, u.reason) for u in run_verdict(run).unchecked]
    report: dict[str, Any] = build_report(run)
    assert report["verdict"]["fake_gpu"] is True and report["smoke"]["fake_gpu"] is True
    markdown = render_markdown(report)
    assert "**Fake GPU:**" in markdown and "Smoke [fake GPU]" in markdown and "[fake GPU] exit 0" in markdown
    api = client.get(f"/api/v1/runs/{run.pk}", HTTP_AUTHORIZATION=f"Bearer {create_token(team_user[1], 'ci')[1]}").json()
    assert api["fake_gpu"] is True and api["verdict"] == "partial"
    assert [s["fake_gpu"] for s in api["stages"] if s["name"] == "smoke"] == [True]
    post_run_status(run.pk)
    status = next(r for r in host.requests if "/statuses/" in r.path)
    comment = next(r for r in host.requests if r.path.endswith("/comments"))
    assert "[fake GPU]" in str(status.body["description"]) and "**Fake GPU:**" in str(comment.body["body"])
    client.force_login(team_user[0])
    assert 'id="run-fake-gpu"' in client.get(f"/runs/{run.pk}/").content.decode()
