"""Request and response shapes of the JSON API (ninja builds the OpenAPI schema from them)."""
from __future__ import annotations

from datetime import datetime

from ninja import Schema

from migrator.projects.models import Project, Run
from migrator.projects.verdict import run_verdict


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
    fake_gpu: bool

    @staticmethod
    def resolve_fake_gpu(obj: object) -> bool:
        data = getattr(obj, "data", None)
        return bool(data.get("fake_gpu")) if isinstance(data, dict) else False


class UncheckedOut(Schema):
    stage: str  # a stage name, or "reference" for the CUDA comparison
    label: str = ""  # the stage name as shown ("CUDA comparison" for the reference)
    reason: str
    detail: str
    needs: str = ""  # "needs a ROCm runner" when a runner this installation lacks was missing


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

    verdict: str
    unchecked: list[UncheckedOut]
    fake_gpu: bool

    @staticmethod
    def resolve_archive_sha256(obj: Run) -> str | None:
        return obj.archive.sha256 if obj.archive_id and obj.archive else None

    @staticmethod
    def resolve_verdict(obj: Run) -> str:
        return str(run_verdict(obj).state)

    @staticmethod
    def resolve_unchecked(obj: Run) -> list[dict[str, str]]:
        return [u.to_dict() for u in run_verdict(obj).unchecked]

    @staticmethod
    def resolve_fake_gpu(obj: Run) -> bool:
        return run_verdict(obj).fake_gpu


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


class RerunIn(Schema):
    from_stage: str = ""  # empty: the first stage that did not pass (as the run page suggests)


class StageLogOut(Schema):
    stage: str
    state: str
    offset: int
    next_offset: int
    size: int
    final: bool  # true when the stage is final and next_offset reached its end
    text: str


class SettingsOut(Schema):
    stored: dict[str, object]  # what differs from the defaults
    effective: dict[str, object]  # every key, defaults included


class DeliverIn(Schema):
    branch: str
    mode: str = "single-source"  # or "copy"


class DeliveryOut(Schema):
    """One delivery of a run: both builds, the branch, the pull request, the conflicts."""

    id: int
    run_id: int
    state: str
    mode: str
    branch: str
    target_branch: str
    commit: str
    rocm: dict[str, object]
    cuda: dict[str, object]
    pr_url: str
    conflicts: list[dict[str, object]]
    kept_hand: list[str]
    lines: dict[str, int]
    error: str
    commands: str
