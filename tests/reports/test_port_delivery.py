"""Delivering the port as a pull request: a CMake and a Makefile project, a local bare repository as
the team's remote, a local HTTP server as the host API. The delivered branch builds for ROCm in the
sandbox and still builds for CUDA with nvcc (where nvcc is installed); a push to the CUDA branch
updates the same pull request, keeps the team's hand commit and reports a conflict."""
from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from pytest_django import DjangoCaptureOnCommitCallbacks

from migrator.accounts.models import Team
from migrator.integrations import actions as hooks
from migrator.integrations.models import ProjectIntegration, WebhookDelivery
from migrator.integrations.verify import github_signature
from migrator.pipeline import orchestrator
from migrator.projects import actions
from migrator.projects.models import Project, Run
from migrator.reports import delivery, tasks
from migrator.reports.models import PortAttempt, PortState
from tests.reports.fake_host import FakeHost
from tests.reports.team_repo import TeamRepo, git, team_repo

FIXTURES = Path(__file__).parent.parent / "fixtures" / "delivery"
NO_NVCC = "no nvcc on this machine: the CUDA side of the delivered branch cannot be built here (CI has it)"
pytestmark = pytest.mark.django_db


def _project(team: Team, name: str, repo: TeamRepo, host: FakeHost) -> Project:
    project = actions.create_project(team, name, user=None, git_url=repo.url)
    ProjectIntegration.objects.create(project=project, webhook_secret="k", host_token="secret-token",
                                      host_api_url=host.url, repository=f"team/{name}")
    return project


def _migrate_and_deliver(repo: TeamRepo, name: str, team: Team, *extra: str) -> str:
    out = io.StringIO()
    try:
        call_command("migrate_repo", repo.url, "--ref", "main", "--project", name, "--team", team.name,
                     "--deliver", "port/rocm", *extra, stdout=out, stderr=io.StringIO())
    except SystemExit as exc:
        assert exc.code == 3, out.getvalue()  # partial: only the fetch stage runs in these tests
    return out.getvalue()


def test_a_cmake_run_opens_a_pull_request_whose_branch_builds_for_rocm_and_for_cuda(
    tmp_path: Path, team_user: tuple[User, Team], host: FakeHost, only_stages: Callable[..., None]
) -> None:
    only_stages("fetch")
    repo = team_repo(tmp_path, FIXTURES / "cmake_saxpy")
    _project(team_user[1], "saxpy", repo, host)
    output = _migrate_and_deliver(repo, "saxpy", team_user[1])

    attempt = PortAttempt.objects.get()
    assert attempt.state == PortState.PROPOSED, output
    assert f"pull request: {host.url}/web/pull/1" in output
    assert attempt.rocm["status"] == "passed"
    # One source: the CUDA files are untouched; the build file gains a guarded HIP path and rocm/ is added.
    changed = repo.changed_files("main", "port/rocm")
    assert sorted(changed) == ["CMakeLists.txt", "rocm/MigratorHIP.cmake", "rocm/hipify_tree.py"]
    cmake = repo.show("port/rocm", "CMakeLists.txt")
    assert 'if(USE_HIP OR GPU_PLATFORM STREQUAL "amd")' in cmake and "enable_language(CUDA)" in cmake
    pull = host.pulls[1]
    assert (pull["head"], pull["base"]) == ("port/rocm", "main")
    assert "## Verified on both sides" in pull["body"] and "| ROCm (`GPU_PLATFORM=amd`) | passed |" in pull["body"]
    assert all("secret-token" not in line for line in output.splitlines())
    if shutil.which("nvcc") is None:
        assert attempt.cuda["status"] == "skipped"
        pytest.skip(NO_NVCC)
    assert attempt.cuda["status"] == "passed", attempt.cuda
    assert "| CUDA (nvcc, unchanged) | passed |" in pull["body"]


def _push_webhook(project: Project, sha: str) -> int:
    body = json.dumps({"ref": "refs/heads/main", "after": sha}).encode()
    response = Client().post(f"/hooks/github/{project.pk}", body, content_type="application/json",
                             HTTP_X_GITHUB_EVENT="push", HTTP_X_GITHUB_DELIVERY=f"push-{sha[:8]}",
                             HTTP_X_HUB_SIGNATURE_256=github_signature("k", body))
    return response.status_code


def _run_webhook_delivery(project: Project, sha: str, monkeypatch: pytest.MonkeyPatch,
                          capture: DjangoCaptureOnCommitCallbacks) -> Run:
    """The webhook's path as the workers take it, synchronously: the hand-off creates the run, the run's
    stages run, ``run_finished`` queues the port update, the update runs."""
    monkeypatch.setattr(hooks, "queue_delivery", lambda pk: True)
    monkeypatch.setattr(hooks, "start_run", lambda run: None)
    monkeypatch.setattr(tasks.redeliver_port, "apply_async",
                        lambda args, queue: delivery.redeliver(int(args[0])))
    assert _push_webhook(project, sha) == 202
    run = hooks.start_delivery_run(WebhookDelivery.objects.get(head_sha=sha).pk)
    assert run is not None
    with capture(execute=True):
        orchestrator.run_sync(run)
        # The stages this test disables end the run without a stage finishing last; the sweep announces
        # such a run, as here.
        orchestrator.announce_if_finished(run.pk)
    return run


def test_a_push_to_the_cuda_branch_updates_the_same_pull_request_keeping_the_hand_commit(
    tmp_path: Path, team_user: tuple[User, Team], host: FakeHost, only_stages: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    only_stages("fetch")
    repo = team_repo(tmp_path, FIXTURES / "make_histogram")
    project = _project(team_user[1], "histogram", repo, host)
    first_output = _migrate_and_deliver(repo, "histogram", team_user[1])
    first = PortAttempt.objects.get()
    assert first.state == PortState.PROPOSED, first_output
    assert first.rocm["status"] == "passed"
    assert first.cuda["status"] == ("skipped" if shutil.which("nvcc") is None else "passed")

    # The team's hand commit on the port branch: another AMD target, and their own flag in the Makefile.
    git(repo.clone, "fetch", "-q", "origin", "port/rocm")
    git(repo.clone, "checkout", "-q", "-b", "port/rocm", "origin/port/rocm")
    hip_mk = repo.clone / "rocm" / "hip.mk"
    hip_mk.write_text(hip_mk.read_text().replace("AMDGPU_TARGETS ?= gfx90a", "AMDGPU_TARGETS ?= gfx90a gfx942"))
    makefile = repo.clone / "Makefile"
    makefile.write_text(makefile.read_text().replace("NVCCFLAGS ?= -O2 -std=c++17", "NVCCFLAGS ?= -O2 -std=c++17 -g"))
    hand = repo.commit_all("Build for MI300 too; keep debug info")
    git(repo.clone, "push", "-q", "origin", "port/rocm")
    # The CUDA branch moves: the same Makefile line changes there (the seeded conflict) and a file is added.
    git(repo.clone, "checkout", "-q", "main")
    makefile.write_text(makefile.read_text().replace("NVCCFLAGS ?= -O2 -std=c++17", "NVCCFLAGS ?= -O3 -std=c++17"))
    (repo.clone / "NOTES.md").write_text("Histogram tool notes.\n")
    moved = repo.commit_all("Optimise harder")
    git(repo.clone, "push", "-q", "origin", "main")

    run = _run_webhook_delivery(project, moved, monkeypatch, django_capture_on_commit_callbacks)

    second = PortAttempt.objects.filter(run=run).get()
    assert second.state == PortState.PROPOSED, (second.error, second.rocm)
    assert second.rocm["status"] == "passed"
    assert second.delivery.pk == first.delivery.pk and second.delivery.pr_number == 1
    assert [r.method for r in host.requests if "/pulls" in r.path] == ["POST", "PATCH"]  # the same pull request
    head = repo.head("port/rocm")
    git(repo.bare, "merge-base", "--is-ancestor", hand, head)  # no force-push: the hand commit stays in history
    git(repo.bare, "merge-base", "--is-ancestor", moved, head)  # the CUDA branch is merged in
    assert "gfx942" in repo.show("port/rocm", "rocm/hip.mk")  # their edit of a generated file, kept
    assert repo.show("port/rocm", "NOTES.md") == "Histogram tool notes."  # the CUDA branch's new file
    assert second.examined == ["Makefile"]  # only what changed on the CUDA branch was examined again
    [conflict] = second.conflicts
    assert conflict["path"] == "Makefile" and conflict["against"] == "regenerated edit"
    assert "-O3" in conflict["regenerated"] and "-O2 -std=c++17 -g" in conflict["hand"]
    assert "-O2 -std=c++17 -g" in repo.show("port/rocm", "Makefile")  # never overwritten
    assert "**Conflict** in `Makefile`" in host.pulls[1]["body"]
