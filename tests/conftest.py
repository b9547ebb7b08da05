"""Fixtures built through the project's own actions, against the real PostgreSQL and Redis."""
from __future__ import annotations

import io
import os
import subprocess
import tarfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest
from django.conf import settings
from django.test import Client
from pytest_django import DjangoDbBlocker, Settings

from tests.brokerhost import RedisServer, celery_app_on
from tests.session_worker import SessionWorker
from tests.worker_settings import WorkerSettings

if TYPE_CHECKING:  # models load only once pytest-django has set Django up
    from django.contrib.auth.models import User
    from playwright.sync_api import Page

    from migrator.accounts.models import Team
    from migrator.projects.models import Project, Run
    from worker.context import Workspace

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
ALICE_PASSWORD = "pw-alice-123"

VADD_CU = """#include <cuda_runtime.h>
#include <cstdio>

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1024;
  float *a, *b, *c;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float));
  vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
  cudaError_t err = cudaDeviceSynchronize();
  printf("vadd: %s\\n", cudaGetErrorString(err));
  cudaFree(a); cudaFree(b); cudaFree(c);
  return err == cudaSuccess ? 0 : 1;
}
"""
# VADD_CU with a warp shuffle (a call hipify converts and reports) and a CUDA CMake project around them.
SHFL_CU = VADD_CU.replace("c[i] = a[i] + b[i];", "c[i] = __shfl_sync(0xffffffff, a[i], 0) + b[i];")
CUDA_CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES CXX CUDA)\nfind_package(CUDA REQUIRED)\n"


def make_tar_gz(files: Mapping[str, str | bytes], top: str = "demo") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in sorted(files.items()):
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def make_build_dir(workspace: Workspace) -> None:
    """What compile and link would leave for smoke to run in: the build folder, on the run's work volume."""
    from worker.toolchain.work import open_work

    with open_work(workspace):
        workspace.build.mkdir(parents=True, exist_ok=True)


def pipeline_run(project: Project, files: Mapping[str, str | bytes]) -> Run:
    """A new run of ``project`` on an archive of ``files``, every enabled stage run in this process."""
    from migrator.pipeline.orchestrator import run_sync
    from migrator.projects import actions

    archive = actions.store_archive(project, io.BytesIO(make_tar_gz(files)), "demo.tar.gz", None)
    return run_sync(actions.create_run(project, user=None, archive=archive))


def run_reference_here(run: Run) -> dict[str, object]:
    """Run the CUDA reference of ``run`` in this process, as a cuda runner would (its row queued again
    first, whatever an earlier step recorded); the result the row keeps."""
    from migrator.pipeline.references import execute_reference
    from migrator.projects.constants import StageState
    from migrator.projects.models import ReferenceRun

    ReferenceRun.objects.update_or_create(run=run, defaults={"state": StageState.QUEUED, "task_id": "", "queued_at": None})
    final = execute_reference(run.pk, worker="cuda-runner (test)")
    assert final is not None
    return dict(final.data) | {"ok": final.state == StageState.PASSED, "summary": final.summary}


@pytest.fixture
def cuda_files() -> dict[str, str]:
    return {"src/vadd.cu": VADD_CU, "README.md": "# demo\n"}


@pytest.fixture
def cuda_archive(cuda_files: dict[str, str]) -> bytes:
    return make_tar_gz(cuda_files)


@pytest.fixture
def git_repo(tmp_path: Path, cuda_files: dict[str, str]) -> Path:
    """A local git repository with a branch, a tag and two commits."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for name, text in cuda_files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True, env=env)
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "first"], check=True, env=env)
    subprocess.run([*git, "tag", "v1"], check=True, env=env)
    (repo / "NOTES.txt").write_text("second commit\n")
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "second"], check=True, env=env)
    return repo


@pytest.fixture
def team_user(db: None) -> tuple[User, Team]:
    from migrator.accounts.actions import create_user_and_team

    user, team, _ = create_user_and_team("alice", ALICE_PASSWORD, "Alpha")
    return user, team


def sign_in_as_alice(page: Page, base: str) -> None:
    """Sign ``team_user`` in through the login page of the live server at ``base``."""
    page.goto(f"{base}/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", ALICE_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


@pytest.fixture
def other_team_user(db: None) -> tuple[User, Team]:
    from migrator.accounts.actions import create_user_and_team

    user, team, _ = create_user_and_team("bob", "pw-bob-123", "Beta")
    return user, team


@pytest.fixture
def alice_client(client: Client, team_user: tuple[User, Team]) -> Client:
    client.force_login(team_user[0])
    return client


@pytest.fixture
def archive_project(team_user: tuple[User, Team], cuda_archive: bytes) -> Project:
    """The team's project with the demo CUDA archive uploaded, made through the actions."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from migrator.projects import actions

    user, team = team_user
    project = actions.create_project(team, "demo", user=user)
    actions.store_archive(project, SimpleUploadedFile("demo.tgz", cuda_archive), "demo.tgz", user)
    return project


@pytest.fixture(autouse=True)
def _isolated_var_dirs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[None]:
    """Each Django test gets its own workspace, upload and cache folders (helpers run tests concurrently)."""
    if not settings.configured or "django_db_setup" not in request.fixturenames and not _uses_db(request):
        yield
        return
    overrides = request.getfixturevalue("settings")
    overrides.MIGRATOR_WORKSPACE_ROOT = tmp_path / "workspaces"
    overrides.MEDIA_ROOT = tmp_path / "uploads"
    overrides.MIGRATOR_CACHE_ROOT = tmp_path / "cache"
    yield


def _uses_db(request: pytest.FixtureRequest) -> bool:
    names = set(request.fixturenames)
    return bool(names & {"db", "transactional_db", "django_db_blocker"}) or request.node.get_closest_marker("django_db") is not None


@pytest.fixture(autouse=True)
def _fresh_throttle() -> Iterator[None]:
    """Sign-in and token failure counts start from zero in every test."""
    if settings.configured:
        from django.core.cache import caches

        from migrator.accounts import throttle

        caches["throttle"].clear()
        throttle.clear_fallback()
    yield


@pytest.fixture
def only_stages(settings: Settings) -> Callable[..., None]:
    """Limit the pipeline to the named stages (the rest are recorded as not available)."""
    from migrator.projects.constants import STAGE_NAMES

    def limit(*names: str) -> None:
        settings.MIGRATOR_DISABLED_STAGES = [n for n in STAGE_NAMES if n not in names]

    return limit


def _test_db_name() -> str:
    from django.db import connection

    return str(connection.settings_dict["NAME"])


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own, empty, that this process publishes to for the test: for tests
    that read what the broker holds, restart it, or kill it (the suite's test broker is shared)."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    with celery_app_on(server.url):
        yield server
    server.kill()


@pytest.fixture(scope="session")
def session_worker(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionWorker]:
    """The session's shared Celery worker (tests/session_worker.py says how tests share it): its private
    broker starts now, the worker itself when a test first asks for it. Torn down before the test database."""
    shared = SessionWorker(tmp_path_factory.mktemp("session-worker"), _test_db_name())
    shared.start_broker()
    try:
        yield shared
    finally:
        shared.stop()


@pytest.fixture
def celery_worker_process(
    request: pytest.FixtureRequest, transactional_db: None, settings: Settings, session_worker: SessionWorker
) -> Iterator[subprocess.Popen[bytes]]:
    """A real Celery worker process on the test database, consuming the cpu and hooks queues.

    One worker serves all tests for the session, on its own broker, which this process publishes to while
    the test runs; it is idle and its broker empty at the start and the end of each test. The stages it
    may run (``@pytest.mark.worker_stages("fetch", ...)``, else this test's ``MIGRATOR_DISABLED_STAGES``)
    and this test's workspace and cache folders reach it through a settings file it reads before each
    task. Local git paths are allowed for it, so tests can clone fixture repositories. A test may kill it;
    the next test gets a fresh one.
    """
    from migrator.celery import app
    from migrator.projects.constants import STAGE_NAMES
    from migrator.projects.models import Stage

    marker = request.node.get_closest_marker("worker_stages")
    if marker is not None:
        settings.MIGRATOR_DISABLED_STAGES = [n for n in STAGE_NAMES if n not in marker.args]
    Path(settings.MIGRATOR_WORKSPACE_ROOT).mkdir(parents=True, exist_ok=True)
    declared = set(app.amqp.queues)
    with celery_app_on(session_worker.broker_url):
        proc = session_worker.serve(WorkerSettings.of(settings), declared)
        try:
            yield proc
        finally:
            # Also the queues this test's stages were routed to (a runner's rocm.<gfx>, say).
            session_worker.settle(declared | set(Stage.objects.exclude(queue="").values_list("queue", flat=True)))


def wait_for(predicate: Callable[[], T | None], timeout: float = 60, interval: float = 0.2) -> T:
    """The predicate's first true value (a row that appeared, say), polled until ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[None]:
    """Extends pytest-django's: before the test database is dropped, end connections that threads or
    worker processes of the tests may have left open, so the drop succeeds and nothing is left behind."""
    yield
    from django.db import connection

    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
