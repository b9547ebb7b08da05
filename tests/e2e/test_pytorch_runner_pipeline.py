"""A PyTorch extension project on real Celery workers: a CPU worker and a fake ROCm PyTorch runner.

The runner is a real process with ``MIGRATOR_RUNNER_PROFILE=rocm`` and ``MIGRATOR_FAKE_ROCM_TORCH`` (test mode
only) and no GPU: its probe runs the toolchain root's ``python3`` in the sandbox for real, finds neither pip
nor setuptools there, and it registers the ``rocm.pytorch`` queue. The CPU worker compiles the extension's
kernels against the hipified header tree; the link stage is routed to the runner, which leases it and runs
the extension's own build (``setup.py build_ext --inplace``, the command for a Python without pip) in the
sandbox over its root. That root has no setuptools and no torch, so the build fails for real, in the
project's setup.py: the test asserts that honest failure, reported at the original file and line, on the
stage, its panel and the runners page. (No root here can pass such a build; see the README.)
"""
from __future__ import annotations

import html
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline.dispatch import start_run
from migrator.projects import actions
from migrator.projects.constants import PYTORCH_QUEUE, RunState, StageState
from migrator.runners.models import Runner
from tests.brokerhost import kill_worker, node_name, start_worker, worker_env
from tests.conftest import _test_db_name, make_tar_gz, wait_for
from tests.pytorch_projects.conftest import FIXTURES
from tests.pytorch_projects.markers import needs_torch
from tests.session_worker import SessionWorker
from tests.stage_panels.panel_project import panel_of, stage_page

pytestmark = [pytest.mark.django_db(transaction=True), needs_torch]
FAKE_TORCH = "2.9.1+rocm7.2"


@pytest.fixture
def pytorch_runner(
    celery_worker_process: subprocess.Popen[bytes], session_worker: SessionWorker, settings: Settings, tmp_path: Path
) -> Iterator[Runner]:
    """A ROCm runner process declaring a fake ROCm PyTorch, with no GPU, on the shared worker's broker."""
    env = worker_env(
        broker_url=session_worker.broker_url, db_name=_test_db_name(), workspace=Path(settings.MIGRATOR_WORKSPACE_ROOT),
        cache=Path(settings.MIGRATOR_CACHE_ROOT), disabled=list(settings.MIGRATOR_DISABLED_STAGES),
        extra={"MIGRATOR_RUNNER_PROFILE": "rocm", "MIGRATOR_FAKE_ROCM_TORCH": FAKE_TORCH,
               "MIGRATOR_GPU_LOCK_DIR": str(tmp_path / "gpu-locks"), "MIGRATOR_RESOLVE_DEPENDENCIES": "off"},
    )
    env.pop("MIGRATOR_FAKE_GPUS", None)
    proc = start_worker(env, tmp_path / "pytorch-runner.log", name="torch-e2e", beat=False, queues="rocm")
    try:
        yield wait_for(lambda: Runner.objects.filter(name=node_name("torch-e2e")).first(), timeout=90)
    finally:
        kill_worker(proc)


def test_an_extensions_link_runs_its_own_build_on_the_pytorch_runner(
    pytorch_runner: Runner, team_user: tuple[User, Team], alice_client: Client, tmp_path: Path
) -> None:
    assert PYTORCH_QUEUE in pytorch_runner.queues and pytorch_runner.info["pytorch"]["fake"]
    user, team = team_user
    project = actions.create_project(team, "rowops", user=user,
                                     settings={"offload_archs": ["gfx90a"], "smoke_command": "python3 -c 'import rowops'"})
    files = {p.relative_to(FIXTURES / "rowops").as_posix(): p.read_text() for p in (FIXTURES / "rowops").rglob("*")
             if p.is_file()}
    actions.store_archive(project, SimpleUploadedFile("rowops.tgz", make_tar_gz(files)), "rowops.tgz", user)
    run = actions.create_run(project, user=user)
    started = time.monotonic()
    start_run(run)

    def finished() -> bool:
        run.refresh_from_db()
        return run.is_final

    wait_for(finished, timeout=540, interval=0.5)
    stages = {s.name: s for s in run.stages.all()}
    assert stages["compile"].state == StageState.PASSED, stages["compile"].summary
    link = stages["link"]
    assert link.queue == PYTORCH_QUEUE and link.worker == pytorch_runner.name  # leased by the runner
    assert link.state == StageState.FAILED and run.state == RunState.FAILED
    build = link.data["runner_build"]
    (command,) = build["commands"]
    assert command["command"] == "cd /workspace/hip && PYTORCH_ROCM_ARCH=gfx90a python3 setup.py build_ext --inplace"
    assert command["exit_code"] == 1 and not command["ok"] and build["outputs"] == []
    line = (FIXTURES / "rowops/setup.py").read_text().splitlines().index("from setuptools import setup") + 1
    problem = build["problems"][0]
    assert (problem["original_file"], problem["original_line"]) == ("setup.py", line)
    assert problem["message"].startswith("ModuleNotFoundError: No module named 'setuptools'")
    assert link.data["fake_torch"] and build["torch"]["version"] == FAKE_TORCH
    assert link.summary.startswith("[fake PyTorch] The build of rowops._C failed on the ROCm PyTorch runner: "
                                   "ModuleNotFoundError: No module named 'setuptools'")
    assert link.summary.endswith(f" at setup.py:{line}")
    assert stages["smoke"].state == StageState.SKIPPED  # nothing built to run
    print(f"\nfake ROCm PyTorch runner: the runner-side build took {build['duration_s']:.2f} s "
          f"(command {command['duration_s']:.2f} s); whole run {time.monotonic() - started:.1f} s")
    panel = html.unescape(panel_of(stage_page(alice_client, run, "link")))
    assert f"Built by the extension's own build on <strong>{pytorch_runner.name}</strong>" in panel
    assert "fake ROCm PyTorch (MIGRATOR_FAKE_ROCM_TORCH)" in panel and command["command"] in panel
    assert f"<code>setup.py:{line}</code> ModuleNotFoundError: No module named 'setuptools'" in panel
    page = alice_client.get(reverse("runners:list")).content.decode()
    assert f"ROCm PyTorch {FAKE_TORCH} (fake)" in page and PYTORCH_QUEUE in page
