"""The CUDA side of a delivery through a CUDA runner (the reference path, the ``cuda`` queue) rather than the
delivering worker's nvcc: the delivered branch is built as the run's CUDA reference builds the original,
the smoke command runs on a leased GPU (faked here: ``MIGRATOR_FAKE_GPUS``; nvcc is real) and its output is
compared with the original's. Both show side by side in the pull request; a delivery whose CUDA output
differs is marked cuda_broken and neither pushed nor proposed. With no CUDA runner registered, the local
nvcc check runs and says so. The queues' hand-offs are run in this process, in order."""
from __future__ import annotations

import io
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.integrations.models import ProjectIntegration
from migrator.projects import actions
from migrator.projects.models import Run
from migrator.reports import delivery, delivery_cuda
from migrator.reports.models import PortAttempt, PortDelivery, PortState
from migrator.runners import presence
from tests.reports.fake_host import FakeHost
from tests.reports.team_repo import TeamRepo, git, team_repo

FIXTURES = Path(__file__).parent.parent / "fixtures" / "delivery"
SMOKE = './main; echo "main exited with $?"'  # no real GPU here: the program's own failure is the output
pytestmark = pytest.mark.django_db


@pytest.fixture
def queues(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cuda and cpu queues' hand-offs, run at once in this process; records which were taken."""
    taken: list[str] = []

    def cuda(attempt_id: int) -> None:
        taken.append("cuda")
        delivery_cuda.check_cuda_side(attempt_id, worker="cuda-runner-1")

    def cpu(attempt_id: int) -> None:
        taken.append("cpu")
        delivery.offer_verified(attempt_id)

    monkeypatch.setattr(delivery, "queue_cuda_check", cuda)
    monkeypatch.setattr(delivery_cuda, "queue_offer", cpu)
    return taken


def _run(tmp_path: Path, team: Team, host: FakeHost, only_stages: Callable[..., None]) -> tuple[Run, TeamRepo]:
    only_stages("fetch")
    repo = team_repo(tmp_path, FIXTURES / "make_histogram")
    project = actions.create_project(team, "histogram", user=None, git_url=repo.url,
                                     settings={"smoke_command": SMOKE, "offload_archs": ["gfx90a"]})
    ProjectIntegration.objects.create(project=project, webhook_secret="k", host_token="secret-token",
                                      host_api_url=host.url, repository="team/histogram")
    try:
        call_command("migrate_repo", repo.url, "--ref", "main", "--project", "histogram", "--team", team.name,
                     stdout=io.StringIO(), stderr=io.StringIO())
    except SystemExit:
        pass
    return Run.objects.get(), repo


def test_without_a_cuda_runner_the_local_nvcc_check_runs_and_says_so(
    tmp_path: Path, team_user: tuple[User, Team], host: FakeHost, only_stages: Callable[..., None], queues: list[str]
) -> None:
    run, _repo = _run(tmp_path, team_user[1], host, only_stages)
    attempt = delivery.deliver_run(run, "port/rocm")
    assert attempt is not None and queues == []
    assert attempt.cuda["via"] == "local nvcc on the delivering worker (no CUDA runner registered)"
    assert attempt.cuda["status"] == ("skipped" if shutil.which("nvcc") is None else "passed")
    assert "local nvcc on the delivering worker" in host.pulls[1]["body"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc on this machine (CI has it)")
def test_a_cuda_runner_builds_the_delivered_branch_and_compares_the_smoke_output(
    tmp_path: Path, team_user: tuple[User, Team], host: FakeHost, only_stages: Callable[..., None],
    queues: list[str], monkeypatch: pytest.MonkeyPatch, settings: Settings,
) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "sm_80")
    settings.MIGRATOR_RUNNER_OFFLINE_S = 3600  # no heartbeat thread here: the builds on 2 loaded cores take longer than 30 s
    run, repo = _run(tmp_path, team_user[1], host, only_stages)
    presence.register("cuda-runner-1", "cuda", ["cuda"], {})

    attempt = delivery.deliver_run(run, "port/rocm")
    assert attempt is not None and queues == ["cuda", "cpu"]
    attempt.refresh_from_db()
    assert attempt.state == PortState.PROPOSED, (attempt.cuda, attempt.error)
    assert attempt.rocm["status"] == "passed"
    cuda = attempt.cuda
    assert cuda["status"] == "passed" and cuda["via"] == "cuda runner cuda-runner-1"
    assert cuda["reason"].startswith("nvcc built the delivered tree by the reference path (2 units, 1 programs, sm_80)")
    smoke = cuda["smoke"]
    assert smoke["comparison"] == "equal" and smoke["original_from"] == "the original, built and run here"
    assert "main exited with" in smoke["delivered"] and smoke["delivered"] == smoke["original"]
    body = host.pulls[1]["body"]
    assert "| CUDA (nvcc, unchanged) | passed | cuda runner cuda-runner-1 |" in body
    assert "| Original (CUDA branch) | Delivered branch |" in body and "(on a fake GPU: MIGRATOR_FAKE_GPUS)" in body
    assert repo.head("port/rocm") == attempt.commit

    # The team's hand commit on the port branch changes what the CUDA program prints: the next delivery
    # keeps it (a hand edit), so its CUDA output no longer matches the original's.
    git(repo.clone, "fetch", "-q", "origin", "port/rocm")
    git(repo.clone, "checkout", "-q", "-b", "port/rocm", "origin/port/rocm")
    main = repo.clone / "main.cpp"
    main.write_text(main.read_text().replace("int main() {", 'int main() {\n    std::printf("port build\\n");'))
    hand = repo.commit_all("Say which build this is")
    git(repo.clone, "push", "-q", "origin", "port/rocm")
    queues.clear()
    second = delivery.deliver_run(run, "port/rocm")
    assert second is not None and queues == ["cuda"]  # never handed back to be offered
    second.refresh_from_db()
    assert second.state == PortState.CUDA_BROKEN and second.cuda["smoke"]["comparison"] == "different"
    assert second.cuda["reason"].startswith("[fake GPU] the smoke output differs from the original")
    assert repo.head("port/rocm") == hand  # nothing pushed over it
    assert [r.method for r in host.requests if "/pulls" in r.path] == ["POST"]  # the pull request not updated
    assert PortAttempt.objects.filter(state=PortState.CUDA_BROKEN).count() == 1


def _waiting(run: Run, status: str, age_s: float) -> PortAttempt:
    record, _ = PortDelivery.objects.get_or_create(project=run.project, target_branch="main", mode="single-source",
                                                   defaults={"branch": "port/rocm"})
    attempt = PortAttempt.objects.create(run=run, delivery=record, state=PortState.VERIFYING, commit="a" * 40,
                                         cuda={"side": "cuda", "status": status}, pending={"head": "a" * 40})
    PortAttempt.objects.filter(pk=attempt.pk).update(created_at=timezone.now() - timedelta(seconds=age_s))
    return attempt


def test_the_sweep_sends_a_stale_check_again_or_ends_it_unpushed(
    tmp_path: Path, team_user: tuple[User, Team], host: FakeHost, only_stages: Callable[..., None],
    settings: Settings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.MIGRATOR_PORT_CUDA_CHECK_WAIT_S = 600
    run, _repo = _run(tmp_path, team_user[1], host, only_stages)
    sent: list[int] = []
    monkeypatch.setattr(delivery_cuda, "queue_cuda_check", sent.append)
    fresh, queued, running = _waiting(run, "queued", 60), _waiting(run, "queued", 700), _waiting(run, "running", 1300)
    assert delivery_cuda.sweep_cuda_checks() == {"sent_again": 0, "not_checked": 1, "runner_lost": 1}
    for attempt in (fresh, queued, running):
        attempt.refresh_from_db()
    assert fresh.state == PortState.VERIFYING and sent == []
    assert queued.state == PortState.FAILED and queued.cuda["reason"].startswith("no CUDA runner took the check")
    assert running.state == PortState.FAILED and running.error == "not offered: the CUDA runner was lost during the check"

    again = _waiting(run, "queued", 700)
    presence.register("cuda-runner-1", "cuda", ["cuda"], {})
    assert delivery_cuda.sweep_cuda_checks()["sent_again"] == 1 and sent == [again.pk]
