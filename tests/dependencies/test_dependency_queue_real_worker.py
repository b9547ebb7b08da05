"""A long resolve never delays another team's compile: real workers, a real broker, a slow index.

Team A's fine-tuning project is scanned on the CPU worker (one process, as on a small host); its
resolves go to the ``deps`` queue, where a worker of their own takes them and waits on an index that
answers a byte every half second until the test lets it go. Meanwhile team B's CUDA project is
fetched, scanned, translated and compiled with the real hipcc on the same CPU worker. B's compile
passes while A's resolve is still running; then the index answers and A's resolve finishes.
"""
from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.dependencies.constants import DEPS_QUEUE, ResolveState
from migrator.dependencies.models import DependencyResolve
from migrator.pipeline.dispatch import start_run
from migrator.projects import actions
from migrator.projects.constants import StageState
from migrator.projects.models import Run
from tests.brokerhost import kill_worker, start_worker, wait_for_worker, worker_env
from tests.conftest import VADD_CU, _test_db_name, make_tar_gz, wait_for
from tests.dependencies.local_index import fill
from tests.pytorch_projects.simple_index import SimpleIndex, serving
from tests.session_worker import SessionWorker
from tests.worker_settings import SETTINGS_FILE_ENV

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def slow_index(tmp_path: Path) -> Iterator[SimpleIndex]:
    with serving(tmp_path / "indexes") as index:
        fill(index)
        index.gate = threading.Event()
        yield index


@pytest.fixture
def deps_worker(celery_worker_process: subprocess.Popen[bytes], session_worker: SessionWorker, settings: Settings,
                tmp_path: Path, slow_index: SimpleIndex) -> Iterator[subprocess.Popen[bytes]]:
    """A worker for the deps queue only, on the shared worker's broker, resolving against the slow index."""
    env = worker_env(
        broker_url=session_worker.broker_url, db_name=_test_db_name(), workspace=Path(settings.MIGRATOR_WORKSPACE_ROOT),
        cache=Path(settings.MIGRATOR_CACHE_ROOT), disabled=list(settings.MIGRATOR_DISABLED_STAGES),
        extra={"MIGRATOR_PIP_INDEX_URL": slow_index.url("pypi"), "MIGRATOR_ROCM_WHEEL_INDEX": slow_index.url("rocm"),
               "MIGRATOR_PIP_TIMEOUT_S": "600", SETTINGS_FILE_ENV: str(session_worker.settings_file)},
    )
    proc = start_worker(env, tmp_path / "deps-worker.log", name="deps-test", beat=False, queues=DEPS_QUEUE,
                        app="tests.worker_app")
    try:
        wait_for_worker(proc, "deps-test", timeout=90)
        yield proc
    finally:
        slow_index.gate.set()  # type: ignore[union-attr]
        kill_worker(proc)


def _run(team_user: tuple[User, Team], name: str, files: dict[str, str]) -> Run:
    user, team = team_user
    project = actions.create_project(team, name, user=user)
    actions.store_archive(project, SimpleUploadedFile(f"{name}.tgz", make_tar_gz(files)), f"{name}.tgz", user)
    run = actions.create_run(project, user=user)
    start_run(run)
    return run


@pytest.mark.worker_stages("fetch", "scan", "hipify", "compile")
def test_a_slow_resolve_on_the_deps_queue_does_not_delay_a_compile(
    deps_worker: subprocess.Popen[bytes], slow_index: SimpleIndex, team_user: tuple[User, Team]
) -> None:
    python = {"requirements.txt": "torch==2.14.1\nnumpy\n", "train.py": "import torch\nprint(torch.version.cuda)\n"}
    run_a = _run(team_user, "team-a-finetune", python)
    resolving = wait_for(lambda: DependencyResolve.objects.filter(state=ResolveState.RUNNING).first(), timeout=120)
    assert resolving.worker.startswith("deps-test")  # taken by the deps worker, not the CPU one
    run_b = _run(team_user, "team-b-kernels", {"src/vadd.cu": VADD_CU})
    compile_b = wait_for(lambda: run_b.stages.filter(name="compile", state__in=(StageState.PASSED, StageState.FAILED))
                         .first(), timeout=300)
    assert compile_b.state == StageState.PASSED, compile_b.summary
    resolving.refresh_from_db()
    assert resolving.state == ResolveState.RUNNING  # still waiting on the index while B compiled
    assert run_a.stages.get(name="scan").state == StageState.PASSED
    slow_index.gate.set()  # type: ignore[union-attr]
    done = wait_for(lambda: DependencyResolve.objects.filter(pk=resolving.pk, state=ResolveState.DONE).first(),
                    timeout=120)
    assert done.result["status"] == "resolved", done.result
    assert {p["name"]: p["version"] for p in done.result["packages"]}["torch"] == "2.14.1+rocm7.2"
