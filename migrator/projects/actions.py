"""Actions on projects and runs shared by views, the API, webhooks and management commands."""
from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Max

from migrator.accounts.models import Team
from migrator.pipeline.dispatch import revoke_tasks
from migrator.projects import transitions
from migrator.projects.constants import REUSABLE_STAGE_STATES, STAGE_NAMES, SourceKind, Trigger
from migrator.projects.models import Project, Run, SourceArchive, Stage
from worker.project_settings import ProjectSettings
from worker.sources.archives import ArchiveError, detect_archive_format


class ActionError(ValueError):
    """A user-facing error: the message is shown as is."""


def create_project(
    team: Team, name: str, *, user: User | None, git_url: str = "", git_ref: str = "",
    settings: dict[str, object] | None = None,
) -> Project:
    ProjectSettings.from_dict(settings or {}, caps=django_settings.MIGRATOR_SETTING_CAPS)
    kind = SourceKind.GIT if git_url else SourceKind.ARCHIVE
    taken = ActionError(f"team {team.name} already has a project named {name!r}")
    if Project.objects.filter(team=team, name=name).exists():
        raise taken
    try:
        with transaction.atomic():  # a savepoint: a concurrent creation must not break the caller's transaction
            return Project.objects.create(
                team=team, name=name, source_kind=kind, git_url=git_url, git_ref=git_ref,
                settings=settings or {}, created_by=user,
            )
    except IntegrityError as exc:
        raise taken from exc


@transaction.atomic
def create_project_from_source(
    team: Team, name: str, *, user: User | None, git_url: str = "", git_ref: str = "",
    upload: IO[bytes] | None = None, upload_name: str = "", settings: dict[str, Any] | None = None,
) -> Project:
    """A project and its first archive together: a rejected upload leaves no project behind."""
    project = create_project(team, name, user=user, git_url=git_url, git_ref=git_ref, settings=settings)
    if upload is not None:
        store_archive(project, upload, upload_name or "upload", user)
    return project


@transaction.atomic
def create_project_and_run(
    team: Team, name: str, *, user: User | None, git_url: str = "", git_ref: str = "",
    upload: IO[bytes] | None = None, upload_name: str = "", trigger: str = Trigger.WEB,
    settings: dict[str, Any] | None = None,
) -> Run:
    """Project, archive and first run in one transaction; the caller starts the run (after commit)."""
    project = create_project_from_source(
        team, name, user=user, git_url=git_url, git_ref=git_ref, upload=upload, upload_name=upload_name,
        settings=settings,
    )
    return create_run(project, user=user, trigger=trigger)


def store_archive(project: Project, stream: IO[bytes], original_name: str, user: User | None) -> SourceArchive:
    """Copy an uploaded archive into storage under its content hash, enforcing the size limit."""
    limit = django_settings.MIGRATOR_MAX_UPLOAD_BYTES
    root = Path(django_settings.MEDIA_ROOT) / "archives"
    root.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    with tempfile.NamedTemporaryFile(dir=root, delete=False, prefix="upload-") as tmp:
        try:
            for block in iter(lambda: stream.read(1024 * 1024), b""):
                size += len(block)
                if size > limit:
                    raise ActionError(f"archive is larger than the {limit // (1024 * 1024)} MB limit")
                digest.update(block)
                tmp.write(block)
        except BaseException:
            Path(tmp.name).unlink(missing_ok=True)
            raise
    tmp_path = Path(tmp.name)
    try:
        kind = detect_archive_format(tmp_path)
    except ArchiveError as exc:
        tmp_path.unlink(missing_ok=True)
        raise ActionError(f"{original_name}: {exc}") from exc
    final = root / f"{digest.hexdigest()}.{kind}"
    shutil.move(str(tmp_path), final)
    return SourceArchive.objects.create(
        project=project, original_name=Path(original_name).name[:255], sha256=digest.hexdigest(),
        size=size, path=str(final), uploaded_by=user,
    )


@transaction.atomic
def create_run(
    project: Project, *, user: User | None, trigger: str = Trigger.WEB,
    archive: SourceArchive | None = None, ref: str = "", pr_url: str = "", commit_sha: str = "",
) -> Run:
    """Create the run and its six queued stages. The caller starts it with ``start_run`` after commit."""
    # Lock the row and read the source from it, not from a caller's possibly stale copy.
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.source_kind == SourceKind.ARCHIVE:
        archive = archive or project.archives.first()
        if archive is None:
            raise ActionError("this project has no uploaded archive yet")
        if archive.project_id != project.pk:
            raise ActionError("that archive belongs to another project")
    elif not project.git_url:
        raise ActionError("this project has no git URL to fetch from")
    number = (project.runs.aggregate(n=Max("number"))["n"] or 0) + 1
    run = Run.objects.create(
        project=project, number=number, trigger=trigger, source_kind=project.source_kind,
        archive=archive if project.source_kind == SourceKind.ARCHIVE else None,
        git_url=project.git_url, ref=ref or project.git_ref, pr_url=pr_url, commit_sha=commit_sha,
        created_by=user, settings_used=dict(project.settings or {}),
    )
    Stage.objects.bulk_create(Stage(run=run, name=name, position=i) for i, name in enumerate(STAGE_NAMES))
    return run


@transaction.atomic
def store_archive_and_create_run(
    project: Project, *, user: User | None, upload: IO[bytes] | None, ref: str = "", pr_url: str = "",
    trigger: str = Trigger.WEB,
) -> Run:
    """A run of a newly uploaded archive (or of the project's source when ``upload`` is None)."""
    archive = store_archive(project, upload, upload.name or "upload", user) if upload is not None else None
    return create_run(project, user=user, trigger=trigger, archive=archive, ref=ref, pr_url=pr_url)


@transaction.atomic
def create_rerun(run: Run, *, user: User | None, from_stage: str = "fetch") -> Run:
    """A new run of the same pinned source; stages before ``from_stage`` reuse the earlier results."""
    if from_stage not in STAGE_NAMES:
        raise ActionError(f"unknown stage {from_stage!r}")
    run.refresh_from_db()
    if not run.is_final:
        raise ActionError("a run can be re-run once it has finished")
    start = STAGE_NAMES.index(from_stage)
    if start and run.files_expired_at is not None:
        raise ActionError(f"the files of run #{run.number} expired on {run.files_expired_at:%Y-%m-%d}: re-run from fetch")
    earlier = {s.name: s for s in run.stages.all()}
    if any(earlier[name].state not in REUSABLE_STAGE_STATES for name in STAGE_NAMES[:start]):
        raise ActionError(f"cannot re-run from {from_stage}: an earlier stage of run #{run.number} did not pass")
    new = create_run(
        run.project, user=user, trigger=Trigger.RERUN, archive=run.archive, ref=run.commit_sha or run.ref,
        pr_url=run.pr_url, commit_sha=run.commit_sha,
    )
    Run.objects.filter(pk=new.pk).update(parent=run)
    for name in STAGE_NAMES[:start]:
        old = earlier[name]
        Stage.objects.filter(run=new, name=name).update(
            state=old.state, summary=f"reused from run #{run.number}: {old.summary}"[:500],
            data=old.data, started_at=old.started_at, finished_at=old.finished_at,
            progress_done=old.progress_done, progress_total=old.progress_total,
        )
    new.refresh_from_db()
    return new


def cancel_run(run: Run) -> None:
    task_ids = transitions.request_cancel(run)
    revoke_tasks(task_ids)


def settings_to_store(raw: dict[str, object]) -> dict[str, object]:
    """Validate a whole settings object (SettingsError names the bad key) and keep only what differs
    from the defaults, so new defaults reach old projects."""
    ProjectSettings.from_dict(raw, caps=django_settings.MIGRATOR_SETTING_CAPS)
    defaults = ProjectSettings().to_dict()
    return {k: v for k, v in raw.items() if json.loads(json.dumps(defaults.get(k))) != json.loads(json.dumps(v))}


def update_settings(project: Project, raw: dict[str, object]) -> dict[str, object]:
    project.settings = settings_to_store(raw)
    project.save(update_fields=["settings"])
    return dict(project.settings)
