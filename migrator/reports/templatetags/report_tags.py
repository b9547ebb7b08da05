"""Small report pieces shown on pages of the projects app (run page links, runs by pull request)."""
from __future__ import annotations

from django import template

from migrator.projects.models import Project, Run
from migrator.reports.models import PortAttempt, StatusPost

register = template.Library()
RUNS_PER_PR = 5
PULL_REQUESTS_SHOWN = 20


@register.inclusion_tag("reports/_run_links.html")
def run_report_links(run: Run) -> dict[str, object]:
    failed = StatusPost.objects.filter(run=run, ok=False).order_by("-pk").first()
    delivered = PortAttempt.objects.filter(run=run).select_related("delivery").first()  # the newest
    return {"run": run, "failed_post": failed, "delivered": delivered}


@register.inclusion_tag("reports/_runs_by_pr.html")
def runs_by_pull_request(project: Project) -> dict[str, object]:
    """The project's pull requests, newest activity first, each with its latest runs."""
    runs = project.runs.exclude(pr_url="").order_by("-number").only("pk", "number", "state", "pr_url", "created_at")
    groups: dict[str, list[Run]] = {}
    for run in runs[: PULL_REQUESTS_SHOWN * RUNS_PER_PR]:
        group = groups.setdefault(run.pr_url, [])
        if len(group) < RUNS_PER_PR:
            group.append(run)
    return {"project": project, "pull_requests": list(groups.items())[:PULL_REQUESTS_SHOWN]}
