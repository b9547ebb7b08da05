"""The projects list and a project's run list: each run's verdict (failed, partial, or partial only
because a runner was missing here: "not checked here"), when, and a small stage strip."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Max

from migrator.projects.models import Project, ReferenceRun, Run, Stage
from migrator.projects.verdict import Verdict, verdict_of


@dataclass(frozen=True)
class ProjectRow:
    project: Project
    run: Run | None
    stages: tuple[Stage, ...]
    verdict: Verdict | None


@dataclass(frozen=True)
class RunRow:
    run: Run
    stages: tuple[Stage, ...]
    verdict: Verdict


def run_rows(runs: Sequence[Run]) -> list[RunRow]:
    """Each run with its stages and verdict: two queries (stages, CUDA references) whatever the number of runs."""
    stages: dict[int, list[Stage]] = {}
    for stage in Stage.objects.filter(run__in=runs).only("run_id", "name", "state", "summary", "data", "position").order_by("position"):
        stages.setdefault(stage.run_id, []).append(stage)
    references = {r.run_id: r for r in ReferenceRun.objects.filter(run__in=runs).only("run_id", "state", "summary", "data")}
    return [RunRow(run, tuple(stages.get(run.pk, [])), verdict_of(stages.get(run.pk, []), run.cancel_requested, references.get(run.pk)))
            for run in runs]


def project_rows(projects: Sequence[Project]) -> list[ProjectRow]:
    """Four queries whatever the number of projects: projects, their last runs, those runs' stages and references."""
    last = dict(Run.objects.filter(project__in=projects).values("project").annotate(n=Max("number")).values_list("project", "n"))
    runs = {r.project_id: r for r in Run.objects.filter(project__in=projects, number__in=set(last.values()))
            if last.get(r.project_id) == r.number}
    by_run = {row.run.pk: row for row in run_rows(list(runs.values()))}
    rows = []
    for project in projects:
        run = runs.get(project.pk)
        found = by_run.get(run.pk) if run else None
        rows.append(ProjectRow(project, run, found.stages if found else (), found.verdict if found else None))
    return rows
