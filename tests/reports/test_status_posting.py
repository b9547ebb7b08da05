"""Commit statuses and the one report comment per PR, posted to a local fake of the host's API."""
from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import DjangoCaptureOnCommitCallbacks, Settings

from migrator.accounts.models import Team
from migrator.celery import app as celery_app
from migrator.integrations.models import ProjectIntegration
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.constants import StageState
from migrator.projects.models import Project, Run
from migrator.reports.models import PrComment, StatusPost
from migrator.reports.posting import post_run_status
from tests.reports.fake_host import FakeHost

pytestmark = pytest.mark.django_db
SHA = "a" * 40
PR = "https://github.com/acme/demo/pull/7"


@pytest.fixture
def host() -> Iterator[FakeHost]:
    fake = FakeHost().start()
    yield fake
    fake.stop()


@pytest.fixture
def project(team_user: tuple[User, Team], settings: Settings, host: FakeHost) -> Project:
    settings.MIGRATOR_HOST_BACKOFF_S = 0.01
    settings.MIGRATOR_ALLOWED_HOST_API_BASES = [host.url]  # the local fake, as an administrator would allow it
    settings.MIGRATOR_HOST_API_TRUSTED_NETWORKS = ["127.0.0.0/8"]
    project = actions.create_project(team_user[1], "demo", user=None, git_url="https://github.com/acme/demo.git")
    ProjectIntegration.objects.create(project=project, host_token="tok-123", host_api_url=host.url)
    return project


def finished_run(project: Project, only_stages: Callable[..., None], pr_url: str = PR, sha: str = SHA) -> Run:
    only_stages()  # every stage "not available": the run passes without fetching anything
    return run_sync(actions.create_run(project, user=None, ref=sha, commit_sha=sha, pr_url=pr_url))


def test_it_posts_the_final_status_and_a_report_comment(
    project: Project, host: FakeHost, only_stages: Callable[..., None]
) -> None:
    run = finished_run(project, only_stages)
    posts = post_run_status(run.pk)
    assert [(p.kind, p.ok, p.attempts) for p in posts] == [("status", True, 1), ("comment", True, 1)]
    status, comment = host.requests
    assert status.path == f"/repos/acme/demo/statuses/{SHA}" and status.body["state"] == "success"
    assert status.body["context"] == "migrator" and status.body["target_url"].endswith(f"/runs/{run.pk}/report")
    assert status.headers["Authorization"] == "Bearer tok-123"
    assert comment.path == "/repos/acme/demo/issues/7/comments" and "Migrator: demo run #1 partial" in str(comment.body["body"])


def test_a_started_run_gets_a_pending_status_and_no_comment(
    project: Project, host: FakeHost, only_stages: Callable[..., None]
) -> None:
    run = finished_run(project, only_stages)
    post_run_status(run.pk, phase="start")
    assert [(r.method, r.body["state"]) for r in host.requests] == [("POST", "pending")]


def test_later_runs_update_the_same_comment(project: Project, host: FakeHost, only_stages: Callable[..., None]) -> None:
    post_run_status(finished_run(project, only_stages).pk)
    second = finished_run(project, only_stages)
    post_run_status(second.pk)
    assert host.paths("POST").count("/repos/acme/demo/issues/7/comments") == 1
    assert host.paths("PATCH") == ["/repos/acme/demo/issues/comments/1000"]
    assert "run #2" in host.comments["1000"] and PrComment.objects.get().comment_id == "1000"


def test_an_older_run_finishing_late_does_not_overwrite_the_comment(
    project: Project, host: FakeHost, only_stages: Callable[..., None]
) -> None:
    first = finished_run(project, only_stages)
    post_run_status(finished_run(project, only_stages).pk)
    post_run_status(first.pk)
    assert "run #2" in host.comments["1000"] and host.paths("PATCH") == []


def test_a_deleted_comment_is_written_again(project: Project, host: FakeHost, only_stages: Callable[..., None]) -> None:
    post_run_status(finished_run(project, only_stages).pk)
    host.comments.clear()
    post_run_status(finished_run(project, only_stages).pk)
    assert PrComment.objects.get().comment_id == "1000" and len(host.paths("POST")) == 4


def test_server_errors_are_retried_then_succeed(
    project: Project, host: FakeHost, only_stages: Callable[..., None]
) -> None:
    run = finished_run(project, only_stages, pr_url="")
    host.fail_next = 2
    (post,) = post_run_status(run.pk)
    assert post.ok and post.attempts == 3 and len(host.requests) == 3


def test_persistent_failures_are_recorded_and_shown_without_touching_the_run(
    project: Project, host: FakeHost, only_stages: Callable[..., None], alice_client: Client
) -> None:
    run = finished_run(project, only_stages)
    host.fail_next = 100
    posts = post_run_status(run.pk)
    assert [(p.ok, p.attempts, p.http_status) for p in posts] == [(False, 3, 500), (False, 3, 500)]
    assert "HTTP 500" in posts[0].error and len(host.requests) == 6
    run.refresh_from_db()
    assert run.state == "partial"
    page = alice_client.get(f"/runs/{run.pk}/report").content.decode()
    assert "post-failed" in page and "HTTP 500" in page
    assert "posting to the pull request failed" in alice_client.get(f"/runs/{run.pk}/").content.decode()


def test_an_unreachable_host_is_recorded(project: Project, host: FakeHost, only_stages: Callable[..., None]) -> None:
    run = finished_run(project, only_stages, pr_url="")
    url = host.url
    host.stop()
    ProjectIntegration.objects.filter(project=project).update(host_api_url=url)
    (post,) = post_run_status(run.pk)
    assert not post.ok and post.attempts == 3 and post.http_status is None and "ConnectError" in post.error


def test_gitlab_statuses_and_notes(project: Project, host: FakeHost, only_stages: Callable[..., None]) -> None:
    ProjectIntegration.objects.filter(project=project).update(host_kind="gitlab")
    pr = "https://gitlab.example.com/group/sub/demo/-/merge_requests/3"
    post_run_status(finished_run(project, only_stages, pr_url=pr).pk)
    post_run_status(finished_run(project, only_stages, pr_url=pr).pk)
    assert host.paths("POST") == [
        f"/projects/group%2Fsub%2Fdemo/statuses/{SHA}", "/projects/group%2Fsub%2Fdemo/merge_requests/3/notes",
        f"/projects/group%2Fsub%2Fdemo/statuses/{SHA}",
    ]
    assert host.paths("PUT") == ["/projects/group%2Fsub%2Fdemo/merge_requests/3/notes/1000"]
    assert host.requests[0].body["state"] == "success" and host.requests[0].headers["PRIVATE-TOKEN"] == "tok-123"


def test_without_a_token_nothing_is_posted(project: Project, host: FakeHost, only_stages: Callable[..., None]) -> None:
    ProjectIntegration.objects.filter(project=project).update(host_token="")
    assert post_run_status(finished_run(project, only_stages).pk) == [] and host.requests == []


def test_the_pipeline_queues_posting_when_the_run_finishes(
    project: Project,
    host: FakeHost,
    only_stages: Callable[..., None],
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    only_stages("fetch")
    run = actions.create_run(project, user=None, ref=SHA, commit_sha=SHA, pr_url=PR)
    Project.objects.filter(pk=project.pk).update(git_url="file:///nonexistent")  # fetch fails at once: the run is final
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        run_sync(run)
    assert len(callbacks) == 1 and run.state == "failed"
    assert [p.kind for p in StatusPost.objects.filter(run=run)] == ["status", "comment"]
    assert host.requests[0].body["state"] == "failure"


def test_the_pipeline_queues_nothing_without_an_integration(
    team_user: tuple[User, Team],
    only_stages: Callable[..., None],
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    only_stages()
    project = actions.create_project(team_user[1], "plain", user=None, git_url="https://github.com/acme/plain.git")
    with django_capture_on_commit_callbacks() as callbacks:
        run_sync(actions.create_run(project, user=None, ref=SHA, pr_url=PR))
    assert callbacks == []


def test_the_first_finished_stage_marks_the_start_and_later_ones_wait_for_the_end(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from migrator.pipeline.orchestrator import announce_stage
    from migrator.projects import transitions
    from migrator.reports import receivers

    phases: list[tuple[int, str]] = []
    monkeypatch.setattr(receivers, "queue_status_post", lambda run_id, phase: phases.append((run_id, phase)))
    run = actions.create_run(project, user=None, ref=SHA, commit_sha=SHA, pr_url=PR)
    fetch, scan = run.stages.get(name="fetch"), run.stages.get(name="scan")
    def finish(stage_id: int, state: StageState, summary: str) -> None:
        assert transitions.claim_stage(stage_id, "w")  # a stage is finished only once it was claimed
        finished = transitions.finish_stage(stage_id, state, summary)
        assert finished is not None
        announce_stage(finished)

    finish(fetch.pk, StageState.PASSED, "ok")
    assert phases == [(run.pk, "start")]
    finish(scan.pk, StageState.PASSED, "ok")
    assert phases == [(run.pk, "start")]
    finish(run.stages.get(name="hipify").pk, StageState.FAILED, "boom")
    assert phases == [(run.pk, "start"), (run.pk, "final")]


def test_a_partial_run_is_a_success_whose_description_says_what_was_not_checked(
    project: Project, host: FakeHost, only_stages: Callable[..., None]
) -> None:
    run = finished_run(project, only_stages)
    assert run.state == "partial"
    post_run_status(run.pk)
    status, comment = host.requests
    assert status.body["state"] == "success"
    assert str(status.body["description"]).startswith("PARTIAL #1: not checked: fetch (not available on this installation)")
    assert "**Verdict:** partial, not checked: fetch: not available on this installation" in str(comment.body["body"])


def test_gitlab_gets_the_partial_run_as_success_with_the_same_description(
    project: Project, host: FakeHost, only_stages: Callable[..., None]
) -> None:
    ProjectIntegration.objects.filter(project=project).update(host_kind="gitlab")
    run = finished_run(project, only_stages, pr_url="")
    post_run_status(run.pk)
    (status,) = host.requests
    assert status.path == f"/projects/acme%2Fdemo/statuses/{SHA}" and status.body["state"] == "success"
    assert status.body["name"] == "migrator" and str(status.body["description"]).startswith("PARTIAL #1")


@pytest.mark.parametrize(("state", "github", "gitlab"), [
    ("passed", "success", "success"), ("partial", "success", "success"), ("failed", "failure", "failed"),
    ("cancelled", "error", "canceled"), ("pending", "pending", "running"),
])
def test_every_run_state_has_a_host_state(state: str, github: str, gitlab: str) -> None:
    from migrator.reports.hostapi import GITHUB_STATES, GITLAB_STATES

    assert (GITHUB_STATES[state], GITLAB_STATES[state]) == (github, gitlab)
