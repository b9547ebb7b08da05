"""Smoke panel: execution, checks, fake-GPU notice, and the CUDA reference run side by side."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.pipeline.orchestrator import run_sync
from migrator.projects.models import Run, Stage
from migrator.projects.workspaces import workspace_for
from tests.conftest import VADD_CU, make_build_dir, run_reference_here
from tests.markers import requires_nvcc
from tests.stage_panels.panel_project import HOSTILE_TEXT, assert_no_raw_hostile, panel_of, stage_page, start_run

pytestmark = pytest.mark.django_db

PRINT_SUM = "python3 -c \"print('sum = 42.0')\""
SUM_CHECK = {"kind": "text", "pattern": "sum = 42"}


def _smoke_run(team_user: tuple[User, Team], settings: dict[str, object], with_reference: bool = False) -> Run:
    """fetch, then smoke in this process on a fake gfx90a (the build directory stands in for compile and link)."""
    run = start_run(team_user, {"src/vadd.cu": VADD_CU}, settings)
    make_build_dir(workspace_for(run.pk))

    def after(stage: Stage) -> None:
        if stage.name == "fetch" and with_reference:
            assert run_reference_here(run)["ok"] is True

    return run_sync(run, on_stage=after)


@pytest.fixture
def fake_gpus(monkeypatch: pytest.MonkeyPatch, only_stages: Callable[..., None]) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a,sm_90")
    only_stages("fetch", "smoke")


def test_smoke_panel_shows_execution_checks_and_that_the_gpu_was_fake(
    alice_client: Client, team_user: tuple[User, Team], fake_gpus: None
) -> None:
    run = _smoke_run(team_user, {"smoke_command": PRINT_SUM, "smoke_checks": [SUM_CHECK]})
    assert run.stages.get(name="smoke").state == "passed"
    panel = panel_of(stage_page(alice_client, run, "smoke"))
    assert 'id="smoke-fake-gpu"' in panel and "did not use a real AMD GPU" in panel
    execution = panel[panel.index('id="smoke-execution"'):panel.index('id="smoke-gpu"')]
    assert "exit code <strong>0</strong>" in execution and "timed out" not in execution
    assert "<dt>Peak host memory</dt>" in execution and "<dt>Duration</dt>" in execution
    assert "<code>gfx90a</code> fake gfx90a" in panel
    checks = panel[panel.index('id="smoke-checks"'):panel.index('id="smoke-reference"')]
    assert 'class="check check-passed"' in checks and "check-failed" not in checks
    assert "Not run: no CUDA runner online" in panel


def test_smoke_panel_marks_a_failing_check(alice_client: Client, team_user: tuple[User, Team], fake_gpus: None) -> None:
    command = f"python3 -c \"print('sum = 41.0'); print('{HOSTILE_TEXT}')\""
    run = _smoke_run(team_user, {"smoke_command": command, "smoke_checks": [SUM_CHECK]})
    assert run.stages.get(name="smoke").state == "failed"
    page = stage_page(alice_client, run, "smoke")
    panel = panel_of(page)
    checks = panel[panel.index('id="smoke-checks"'):panel.index('id="smoke-reference"')]
    assert 'class="check check-failed"' in checks and ">fail</span>" in checks
    assert 'id="smoke-classification"' in panel and "<strong>checks-failed</strong>" in panel
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)" in panel
    assert_no_raw_hostile(page)  # printed by the program: in the panel's output and in the log


@requires_nvcc
def test_smoke_panel_puts_the_cuda_reference_run_beside_the_rocm_run(
    alice_client: Client, team_user: tuple[User, Team], fake_gpus: None
) -> None:
    # The lease pins HIP_VISIBLE_DEVICES on AMD and CUDA_VISIBLE_DEVICES on NVIDIA: the outputs differ on one line.
    command = "python3 -c \"import os; print('sum = 42.0'); print('lanes', 64 if 'HIP_VISIBLE_DEVICES' in os.environ else 32)\""
    run = _smoke_run(team_user, {"smoke_command": command, "smoke_checks": [SUM_CHECK]}, with_reference=True)
    smoke = run.stages.get(name="smoke")
    assert smoke.data["reference"]["comparison"]["status"] == "different"
    panel = panel_of(stage_page(alice_client, run, "smoke"))
    reference = panel[panel.index('id="smoke-reference"'):]
    assert "CUDA reference ran" in reference and "<code>sm_90</code> fake sm_90" in reference
    assert "<th>Duration</th>" in reference and "<th>Peak host memory</th>" in reference
    diff = reference[reference.index('id="smoke-output-diff"'):]
    assert '<tr class="row-equal"><td class="ln">1</td><td class="code">sum = 42.0</td>' in diff
    assert '<tr class="row-replace">' in diff and ">32</span>" in diff and ">64</span>" in diff
    assert "<strong>output-differs</strong>" in panel


def test_smoke_panel_links_the_classification_to_its_notebook_entry(
    alice_client: Client, team_user: tuple[User, Team], fake_gpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "sm_90")  # an NVIDIA device only: no AMD GPU to run on
    run = _smoke_run(team_user, {"smoke_command": PRINT_SUM, "smoke_checks": [SUM_CHECK]})
    smoke = run.stages.get(name="smoke")
    assert smoke.state == "failed" and smoke.data["classification"]["kind"] == "no-device"
    panel = panel_of(stage_page(alice_client, run, "smoke"))
    classification = panel[panel.index('id="smoke-classification"'):].split("</p>")[0]
    assert "<strong>no-device</strong>" in classification
    assert f'href="{reverse("notebook:entry", args=["no-amd-gpu-visible"])}"' in classification
    assert "Not run: no AMD GPU on this machine" in panel and "No GPU was leased." in panel
