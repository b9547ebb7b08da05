"""``migrate_repo``: run the whole pipeline synchronously for scripts and CI."""
from __future__ import annotations

import gzip
import json
import os
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.urls import reverse

from migrator.accounts.actions import ensure_team
from migrator.accounts.models import Membership, Team
from migrator.pipeline import orchestrator
from migrator.projects import actions
from migrator.projects.constants import RunState, Trigger
from migrator.projects.models import Project, Run, Stage
from migrator.reports.build import build_report
from migrator.reports.links import absolute_url
from migrator.reports.markdown import export_markdown
from worker.sources.gitsource import check_git_url


@dataclass(frozen=True)
class SourceChoice:
    kind: str  # "archive" | "git"
    git_url: str = ""
    archive_path: Path | None = None


def classify_source(path_or_url: str) -> SourceChoice:
    """A file is an archive, a git checkout is a local git source, another directory is packed."""
    path = Path(path_or_url).expanduser()
    if path.is_file():
        return SourceChoice("archive", archive_path=path)
    if path.is_dir():
        if (path / ".git").exists():
            return SourceChoice("git", git_url=str(path.resolve()))
        return SourceChoice("archive", archive_path=path)
    check_git_url(path_or_url, allow_local=True)
    return SourceChoice("git", git_url=path_or_url)


def pack_directory(root: Path) -> Path:
    """A reproducible tar.gz of a directory (sorted, no owners, fixed times) so its checksum pins it."""
    handle, name = tempfile.mkstemp(suffix=".tar.gz")
    os.close(handle)

    def clean(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if info.name.split("/")[-1] == ".git":
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        return info

    # gzip stores a time and a file name in its header: pin both so equal trees give equal bytes.
    with open(name, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped:
        with tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for item in sorted(p for p in root.rglob("*") if ".git" not in p.relative_to(root).parts):
                arcname = f"{root.name or 'source'}/{item.relative_to(root)}"
                tar.add(item, arcname=arcname, recursive=False, filter=clean)
    return Path(name)


def _project_for(choice: SourceChoice, name: str, team: Team) -> Project:
    project = Project.objects.filter(team=team, name=name).first()
    if project is None:
        try:
            return actions.create_project(team, name, user=None, git_url=choice.git_url)
        except actions.ActionError:  # another migrate_repo created it a moment ago: use that one
            project = Project.objects.filter(team=team, name=name).first()
            if project is None:
                raise
    if project.source_kind != choice.kind or project.git_url != choice.git_url:
        raise actions.ActionError(f"project {name!r} exists with another source; pass --project to pick a name")
    return project


@transaction.atomic
def _record_run(choice: SourceChoice, name: str, team: Team, ref: str, settings: dict[str, object] | None) -> Run:
    """Project, archive and run in one transaction, so the run is only ever seen with its archive."""
    project = _project_for(choice, name, team)
    if settings is not None:  # checked (the operator's caps too) as the settings form and the API check them
        Project.objects.filter(pk=project.pk).update(settings=actions.settings_to_store(settings))
    archive = None
    if choice.archive_path is not None:
        packed = choice.archive_path if choice.archive_path.is_file() else pack_directory(choice.archive_path)
        try:
            with open(packed, "rb") as stream:
                archive = actions.store_archive(project, stream, choice.archive_path.name, None)
        finally:
            if packed != choice.archive_path:
                packed.unlink(missing_ok=True)
    return actions.create_run(project, user=None, trigger=Trigger.CLI, archive=archive, ref=ref)


def first_users_team() -> Team:
    """The team of the first user (the one ``./dev up`` created), so what the CLI runs is theirs to see."""
    user = get_user_model().objects.filter(memberships__isnull=False).order_by("date_joined", "pk").first()
    if user is None:
        raise actions.ActionError(
            "no user belongs to a team yet: start once with ./dev up (it creates the first user), "
            "or create one with manage.py create_team_user USER TEAM, or pass --team"
        )
    membership = Membership.objects.filter(user=user).select_related("team").order_by("joined_at", "pk").first()
    assert membership is not None  # the filter above found one
    return membership.team


def choose_team(name: str) -> Team:
    """The named team (created when missing), else the first user's."""
    return ensure_team(name)[0] if name else first_users_team()


def run_link(run: Run) -> str:
    """Where the run's report opens in the dashboard."""
    return absolute_url(reverse("reports:run", args=[run.pk]))


def migrate_repo(
    path_or_url: str, *, ref: str = "", team: Team, project_name: str = "",
    settings: dict[str, object] | None = None, on_stage: Callable[[Stage], None] = lambda s: None,
) -> Run:
    choice = classify_source(path_or_url)
    name = project_name or Path(path_or_url.rstrip("/")).name.removesuffix(".git") or "repository"
    run = _record_run(choice, name, team, ref, settings)
    return orchestrator.run_sync(run, on_stage=on_stage)


# Exit codes of ``migrate_repo``: scripts tell "all checked and passed" from "nothing failed but
# not everything was checked" (partial) and from a failure.
EXIT_PASSED, EXIT_FAILED, EXIT_PARTIAL = 0, 1, 3


def exit_code(state: str) -> int:
    if state == RunState.PASSED:
        return EXIT_PASSED
    return EXIT_PARTIAL if state == RunState.PARTIAL else EXIT_FAILED


def format_stage_line(stage: Stage) -> str:
    duration = f"{stage.duration_s:.2f}s" if stage.duration_s is not None else "-"
    return f"{stage.name:<8} {stage.state:<9} {duration:>9}  {stage.summary}"


def write_report(run: Run, path: Path) -> None:
    """The run's full report: Markdown for a ``.md`` path, JSON otherwise."""
    report = build_report(run)
    path.write_text(export_markdown(report) if path.suffix == ".md" else json.dumps(report, indent=2, default=str))
