"""The projects list: each project's last run, its verdict, when, and a small stage strip."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Max

from migrator.projects.models import Project, Run, Stage
from migrator.projects.verdict import Verdict, verdict_of


@dataclass(frozen=True)
class ProjectRow:
    project: Project
    run: Run | None
    stages: tuple[Stage, ...]
    verdict: Verdict | None


def project_rows(projects: Sequence[Project]) -> list[ProjectRow]:
    """Three queries whatever the number of projects: projects, their last runs, those runs' stages."""
    last = dict(Run.objects.filter(project__in=projects).values("project").annotate(n=Max("number")).values_list("project", "n"))
    runs = {r.project_id: r for r in Run.objects.filter(project__in=projects, number__in=set(last.values()))
            if last.get(r.project_id) == r.number}
    stages: dict[int, list[Stage]] = {}
    for stage in Stage.objects.filter(run__in=runs.values()).only("run_id", "name", "state", "summary", "data", "position").order_by("position"):
        stages.setdefault(stage.run_id, []).append(stage)
    rows = []
    for project in projects:
        run = runs.get(project.pk)
        own = tuple(stages.get(run.pk, [])) if run else ()
        rows.append(ProjectRow(project, run, own, verdict_of(own, run.cancel_requested) if run else None))
    return rows
