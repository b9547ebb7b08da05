"""Projects, their runs and each run's stages with their streamed logs."""
from __future__ import annotations

from datetime import datetime
from typing import Protocol

from django.conf import settings as django_settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.projects.constants import (
    FINAL_RUN_STATES,
    FINAL_STAGE_STATES,
    RunState,
    SourceKind,
    StageState,
    Trigger,
)
from migrator.projects.queues import is_rocm_queue


class Project(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="projects")
    name = models.CharField(max_length=120)
    source_kind = models.CharField(max_length=10, choices=SourceKind.choices)
    git_url = models.CharField(max_length=500, blank=True)
    git_ref = models.CharField(max_length=200, blank=True, help_text="branch, tag or commit; empty: default branch")
    settings = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="unique_project_name_per_team")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("projects:detail", args=[self.pk])


class SourceArchive(models.Model):
    """An uploaded archive, stored once by content hash; runs point at the one they used."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="archives")
    original_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    size = models.BigIntegerField()
    path = models.CharField(max_length=500)
    uploaded_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-uploaded_at"]


class Run(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    number = models.PositiveIntegerField()
    state = models.CharField(max_length=10, choices=RunState.choices, default=RunState.QUEUED, db_index=True)
    trigger = models.CharField(max_length=10, choices=Trigger.choices, default=Trigger.WEB)
    source_kind = models.CharField(max_length=10, choices=SourceKind.choices)
    archive = models.ForeignKey(SourceArchive, null=True, blank=True, on_delete=models.PROTECT, related_name="runs")
    git_url = models.CharField(max_length=500, blank=True)
    ref = models.CharField(max_length=200, blank=True)
    commit_sha = models.CharField(max_length=64, blank=True)
    pr_url = models.CharField(max_length=500, blank=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns")
    cancel_requested = models.BooleanField(default=False)
    # The project settings (as stored: differences from the defaults) when the run was created, so
    # a report can tell a settings change from a change in the code.
    settings_used = models.JSONField(default=dict, blank=True)
    # Bumped on every change a viewer could see, so live partials can answer "nothing new" cheaply.
    version = models.PositiveBigIntegerField(default=0)
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Set by the retention sweep (migrator/pipeline/retention.py): when the run's work area (build
    # outputs) was removed, and when all its files were (its review pages and downloads then say "expired").
    work_removed_at = models.DateTimeField(null=True, blank=True)
    files_expired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="unique_run_number"),
            # A run fetches exactly the source it recorded: never an archive run without its archive
            # (it must not fall back to anything else), never a git run without a URL.
            models.CheckConstraint(condition=~Q(source_kind="archive") | Q(archive__isnull=False),
                                   name="archive_run_has_archive"),
            models.CheckConstraint(condition=~Q(source_kind="git") | ~Q(git_url=""), name="git_run_has_url"),
        ]
        indexes = [models.Index(fields=["project", "-number"])]
        ordering = ["-number"]

    def __str__(self) -> str:
        return f"{self.project} #{self.number}"

    def get_absolute_url(self) -> str:
        return reverse("projects:run", args=[self.pk])

    @property
    def is_final(self) -> bool:
        return self.state in FINAL_RUN_STATES

    @property
    def pinned_source(self) -> str:
        if self.archive_id and self.archive:
            return f"sha256:{self.archive.sha256}"
        return self.commit_sha

    @property
    def duration_s(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None



class _Timed(Protocol):
    state: str
    started_at: datetime | None
    finished_at: datetime | None


class TimedWork:
    """What a stage and the CUDA reference share: whether the state is final, and how long the work took."""

    @property
    def is_final(self: _Timed) -> bool:
        return self.state in FINAL_STAGE_STATES

    @property
    def duration_s(self: _Timed) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class Stage(TimedWork, models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="stages")
    name = models.CharField(max_length=20)
    position = models.PositiveSmallIntegerField()
    state = models.CharField(max_length=20, choices=StageState.choices, default=StageState.QUEUED)
    queue = models.CharField(max_length=20, default="cpu")
    task_id = models.CharField(max_length=64, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    summary = models.CharField(max_length=500, blank=True)
    data = models.JSONField(default=dict, blank=True)
    log_size = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="unique_stage_per_run")]
        indexes = [
            models.Index(fields=["state", "heartbeat_at"]),
            # The sweep's queued-stage queries (waiting smoke stages, unclaimed cpu stages).
            models.Index(fields=["state", "queue", "queued_at"], name="stage_queued_idx"),
        ]
        ordering = ["position"]

    def __str__(self) -> str:
        return f"{self.run} {self.name}"

    @property
    def waiting_for_rocm_runner(self) -> bool:
        return self.state == StageState.QUEUED and self.queued_at is not None and is_rocm_queue(self.queue)

    @property
    def progress_percent(self) -> int:
        # Only a stage that ran to its end fills its bar; skipped or cancelled ones show what they did.
        if self.state in (StageState.SKIPPED, StageState.NOT_APPLICABLE):
            return 0
        if not self.progress_total:
            return 100 if self.state in (StageState.PASSED, StageState.FAILED) else 0
        return min(100, round(100 * self.progress_done / self.progress_total))


class ReferenceRun(TimedWork, models.Model):
    """The CUDA reference run of a run's smoke command: the untranslated sources built with nvcc and run on
    a CUDA runner, so the smoke stage can compare outputs. A row with a state like a stage's (queued,
    running, passed, failed, skipped, cancelled), created when smoke is next and a comparison is asked
    for; the smoke stage is handed out once this row is final. Its log is ``records/reference.log``, its
    full result ``records/reference.json``; ``data`` keeps the result with output tails."""

    name = "reference"  # read like a stage's name by the verdict
    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="reference")
    state = models.CharField(max_length=20, choices=StageState.choices, default=StageState.QUEUED)
    queue = models.CharField(max_length=20, default="cuda")
    task_id = models.CharField(max_length=64, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    summary = models.CharField(max_length=500, blank=True)
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [models.Index(fields=["state", "queued_at"], name="reference_state_idx")]

    def __str__(self) -> str:
        return f"{self.run} CUDA reference"



class LogChunk(models.Model):
    """A piece of a stage's log; ``offset`` is its first byte's position in the whole log."""

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="log_chunks")
    offset = models.PositiveBigIntegerField()
    text = models.TextField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["stage", "offset"], name="unique_log_offset")]
        ordering = ["offset"]
