"""The 'pytorch' capability: a ROCm runner whose probe found a ROCm PyTorch takes the rocm.pytorch queue, the
link and smoke of an extension project are routed there while one is online (a CPU worker records "needs a
ROCm PyTorch runner" otherwise), the runners page names the capability, and the sweep words the wait."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from migrator.accounts.models import Team
from migrator.pipeline import sweep
from migrator.pipeline.orchestrator import queue_for
from migrator.projects import actions
from migrator.projects.constants import PYTORCH_QUEUE, StageState
from migrator.projects.models import Run, Stage
from migrator.projects.verdict import FAKE_TORCH, NO_ROCM_PYTORCH_RUNNER, unchecked_reason
from migrator.runners.models import Runner
from migrator.runners.presence import pytorch_queues, register
from worker.project_settings import ProjectSettings
from worker.runner.torch_probe import TorchProbe

pytestmark = pytest.mark.django_db
ROCM_TORCH = TorchProbe("rocm-pytorch-image", "2.9.1+rocm7.2.0", "7.2.26015", "3.12.3", True, True,
                        "/opt/venv/lib/python3.12/site-packages/torch/share/cmake")


def _run(team_user: tuple[User, Team], compile_mode: str, smoke_command: str = "") -> Run:
    user, team = team_user
    project = actions.create_project(team, f"ext-{compile_mode}-{bool(smoke_command)}", user=user,
                                     git_url="https://example.org/ext.git", settings={"smoke_command": smoke_command})
    run = actions.create_run(project, user=user)
    Stage.objects.filter(run=run, name="compile").update(state=StageState.PASSED, data={"mode": compile_mode})
    return run


def _register_pytorch_runner(torch: TorchProbe = ROCM_TORCH) -> Runner:
    info = {"gpus": [], "pytorch": torch.to_dict()}
    return register("torch-box@a", "rocm", sorted(["rocm", *pytorch_queues(info)]), info)


def test_only_a_runner_whose_probe_found_a_rocm_pytorch_takes_the_queue() -> None:
    assert pytorch_queues({"pytorch": ROCM_TORCH.to_dict()}) == [PYTORCH_QUEUE]
    assert pytorch_queues({"pytorch": TorchProbe("rocm-7.2", reason="no torch").to_dict()}) == []
    assert pytorch_queues({}) == []


def test_an_extensions_link_and_smoke_go_to_a_pytorch_runner_while_one_is_online(
    team_user: tuple[User, Team]
) -> None:
    run = _run(team_user, "extension", smoke_command="python3 -c 'import rowops'")
    link, smoke = (run.stages.get(name=name) for name in ("link", "smoke"))
    settings = ProjectSettings.stored_or_default(run.settings_used)
    assert queue_for(link, settings) == queue_for(smoke, settings) == "cpu"  # none online: recorded as not run
    runner = _register_pytorch_runner()
    assert queue_for(link, settings) == queue_for(smoke, settings) == PYTORCH_QUEUE
    Runner.objects.filter(pk=runner.pk).update(last_seen=timezone.now() - timedelta(hours=1))
    assert queue_for(link, settings) == "cpu"  # registered, but not alive


def test_a_c_project_and_an_extension_without_smoke_command_are_not_routed_there(
    team_user: tuple[User, Team]
) -> None:
    _register_pytorch_runner()
    plain = _run(team_user, "per_tu", smoke_command="./app")
    settings = ProjectSettings.stored_or_default(plain.settings_used)
    assert queue_for(plain.stages.get(name="link"), settings) == "cpu"
    assert queue_for(plain.stages.get(name="smoke"), settings).startswith("rocm.gfx")
    quiet = _run(team_user, "extension")
    assert queue_for(quiet.stages.get(name="smoke"), ProjectSettings.stored_or_default(quiet.settings_used)) == "cpu"


def test_the_runners_page_names_the_capability(alice_client: Client) -> None:
    _register_pytorch_runner()
    fake = TorchProbe("rocm-7.2", "2.9.1+rocm7.2", "fake", "3.14.8", False, False, fake=True, reason="fake")
    register("fake-torch@b", "rocm", ["rocm", PYTORCH_QUEUE], {"gpus": [], "pytorch": fake.to_dict()})
    register("plain-rocm@c", "rocm", ["rocm"], {"gpus": [], "pytorch": TorchProbe(
        "rocm-7.2", reason="ModuleNotFoundError: No module named 'torch'").to_dict()})
    page = alice_client.get(reverse("runners:list")).content.decode()
    assert "ROCm PyTorch 2.9.1+rocm7.2.0 · HIP 7.2.26015" in page and "in rocm-pytorch-image, Python 3.12.3" in page
    assert "ROCm PyTorch 2.9.1+rocm7.2 (fake)" in page and "pip no, setuptools no" in page
    assert "no ROCm PyTorch: ModuleNotFoundError: No module named &#x27;torch&#x27;" in page
    assert "<strong>Online now:</strong> <code>fake-torch@b</code> (2.9.1+rocm7.2, fake), <code>torch-box@a</code>" \
        in page


def test_a_stage_no_pytorch_runner_took_is_not_run(team_user: tuple[User, Team]) -> None:
    run = _run(team_user, "extension")
    link = run.stages.get(name="link")
    Stage.objects.filter(pk=link.pk).update(queue=PYTORCH_QUEUE, task_id="t-1",
                                            queued_at=timezone.now() - timedelta(hours=2))
    link.refresh_from_db()
    skipped = sweep._skip_smoke_waiting(Stage.objects.select_related("run").get(pk=link.pk))
    assert skipped is not None and skipped.state == StageState.SKIPPED
    assert skipped.summary == "not run: no ROCm PyTorch runner within 30 min"
    assert unchecked_reason(skipped) == NO_ROCM_PYTORCH_RUNNER


def test_a_pass_with_a_fake_rocm_pytorch_is_not_checked() -> None:
    row = Stage(name="link", state=StageState.PASSED, summary="[fake PyTorch] Built x", data={"fake_torch": True})
    assert unchecked_reason(row) == FAKE_TORCH
