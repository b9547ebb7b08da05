"""Post a run's commit status and its report comment to the pull request's host.

Called from the Celery task ``reports.post_run_status``. Each attempt series is recorded as a
``StatusPost`` (shown on the report page); a failure to post never changes the run itself.
The report comment is one per pull request: later runs edit it in place.
"""
from __future__ import annotations

import logging

from django.conf import settings as django_settings
from django.db import transaction
from django.urls import reverse

from migrator.integrations.hostpolicy import host_policy
from migrator.integrations.models import ProjectIntegration
from migrator.projects.constants import FINAL_RUN_STATES
from migrator.projects.models import Run
from migrator.projects.verdict import run_verdict
from migrator.reports import hostapi
from migrator.reports.build import build_report
from migrator.reports.links import absolute_url
from migrator.reports.markdown import render_markdown
from migrator.reports.models import PostKind, PostPhase, PrComment, StatusPost
from migrator.reports.prlinks import PullRequest, parse_pr_url, repo_from_git_url

log = logging.getLogger(__name__)


def client_for(integration: ProjectIntegration) -> hostapi.HostClient:
    backoff = float(getattr(django_settings, "MIGRATOR_HOST_BACKOFF_S", hostapi.BACKOFF_S))
    return hostapi.HostClient(integration.host_kind, integration.api_url, integration.host_token, backoff_s=backoff,
                              policy=host_policy())


def _record(run: Run, kind: str, phase: str, answer: hostapi.HostAnswer) -> StatusPost:
    return StatusPost.objects.create(
        run=run, kind=kind, phase=phase, target=answer.url[:500], ok=answer.ok,
        http_status=answer.http_status, attempts=answer.attempts, error=answer.error[:500],
    )


def _status_words(run: Run, phase: str) -> tuple[str, str]:
    if phase == PostPhase.START or run.state not in FINAL_RUN_STATES:
        return "pending", f"Migration run #{run.number} is running"
    return str(run.state), status_description(run)


def status_description(run: Run) -> str:
    """One line for the host's status: what failed, or for a partial run what was not checked."""
    verdict = run_verdict(run)
    fake = " [fake GPU]" if verdict.fake_gpu else ""
    if verdict.is_partial:
        return f"PARTIAL #{run.number}{fake}: not checked: {verdict.unchecked_text()}"
    failed = run.stages.filter(state="failed").order_by("position").first()
    reason = f": {failed.name} failed" if failed else ""
    return f"Migration run #{run.number} {run.state}{reason}{fake}"


def _post_status(run: Run, client: hostapi.HostClient, repo: str, phase: str) -> StatusPost:
    if not run.commit_sha or not repo:
        missing = "no commit (archive source or not fetched yet)" if not run.commit_sha else "no repository known"
        return _record(run, PostKind.STATUS, phase, hostapi.HostAnswer(ok=False, url="", error=f"not posted: {missing}"))
    state, description = _status_words(run, phase)
    target = absolute_url(reverse("reports:run", args=[run.pk]))
    answer = hostapi.post_commit_status(client, repo, run.commit_sha, state, description, target)
    return _record(run, PostKind.STATUS, phase, answer)


def _post_comment(run: Run, client: hostapi.HostClient, pr: PullRequest) -> StatusPost | None:
    body = render_markdown(build_report(run))
    with transaction.atomic():
        row, _ = PrComment.objects.select_for_update().get_or_create(project=run.project, pr_url=pr.url)
        if row.run_number > run.number:
            return None  # a newer run already reported on this pull request
        answer = None
        if row.comment_id:
            answer = hostapi.update_comment(client, pr.repo, pr.number, row.comment_id, body)
            if answer.http_status == 404:  # someone deleted our comment: write a new one
                row.comment_id, answer = "", None
        if answer is None:
            answer = hostapi.create_comment(client, pr.repo, pr.number, body)
            if answer.ok and answer.body and answer.body.get("id") is not None:
                row.comment_id = str(answer.body["id"])
        if answer.ok:
            row.run_number = run.number
        row.save()
        return _record(run, PostKind.COMMENT, PostPhase.FINAL, answer)


def post_run_status(run_id: int, phase: str = PostPhase.FINAL) -> list[StatusPost]:
    """Post what the project's integration asks for; returns the recorded posts (none without a token)."""
    run = Run.objects.select_related("project", "archive").filter(pk=run_id).first()
    integration = ProjectIntegration.objects.filter(project_id=run.project_id).first() if run else None
    if run is None or integration is None or not integration.can_post:
        return []
    client = client_for(integration)
    pr = parse_pr_url(run.pr_url) if run.pr_url else None
    repo = pr.repo if pr else integration.repository or repo_from_git_url(run.git_url)
    posts: list[StatusPost] = []
    if integration.post_statuses:
        posts.append(_post_status(run, client, repo, phase))
    if phase == PostPhase.FINAL and integration.post_comments and pr is not None:
        comment = _post_comment(run, client, pr)
        posts += [comment] if comment else []
    for post in posts:
        if not post.ok:
            log.warning("posting %s for run %s failed: %s", post.kind, run.pk, post.error)
    return posts
