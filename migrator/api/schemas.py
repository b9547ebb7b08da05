"""Request and response shapes of the JSON API (ninja builds the OpenAPI schema from them)."""
from __future__ import annotations

from datetime import datetime

from ninja import Schema

from migrator.projects.models import Project, Run


class ErrorOut(Schema):
    detail: str


class ProjectIn(Schema):
    name: str
    git_url: str = ""
    git_ref: str = ""
    source_subdir: str = ""  # one directory of the repository (fetched as a sparse clone)


class ProjectOut(Schema):
    id: int
    name: str
    team: str
    source_kind: str
    git_url: str
    git_ref: str
    created_at: datetime

    @staticmethod
    def resolve_team(obj: Project) -> str:
        return obj.team.name


class RunIn(Schema):
    ref: str = ""
    pr_url: str = ""


class StageOut(Schema):
    name: str
    state: str
    summary: str
    queued_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    duration_s: float | None
    progress_done: int
    progress_total: int


class RunOut(Schema):
    id: int
    project_id: int
    number: int
    state: str
    trigger: str
    source_kind: str
    ref: str
    commit_sha: str
    pr_url: str
    archive_sha256: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @staticmethod
    def resolve_archive_sha256(obj: Run) -> str | None:
        return obj.archive.sha256 if obj.archive_id and obj.archive else None


class RunDetailOut(RunOut):
    stages: list[StageOut]

    @staticmethod
    def resolve_stages(obj: Run) -> list[object]:
        return list(obj.stages.all())


class NotebookHit(Schema):
    slug: str
    title: str = ""
    url: str = ""
    score: float | None = None
