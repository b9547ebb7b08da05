"""The shared error notebook: entries with signatures, their edit history, and where they matched."""
from __future__ import annotations

from django.conf import settings as django_settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F
from django.urls import reverse

from migrator.projects.models import Run, Stage


class Entry(models.Model):
    class Origin(models.TextChoices):
        SEED = "seed", "Seed"
        USER = "user", "User"
        IMPORT = "import", "Import"

    slug = models.SlugField(max_length=120, unique=True)
    title = models.CharField(max_length=200)
    symptom = models.TextField()
    cause = models.TextField(blank=True, help_text="Markdown")
    fix = models.TextField(blank=True, help_text="Markdown")
    stages = models.JSONField(default=list, blank=True)
    tags = models.JSONField(default=list, blank=True)
    links = models.JSONField(default=list, blank=True)
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.USER)
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    matched_runs = models.PositiveIntegerField(default=0)
    fixed_count = models.PositiveIntegerField(default=0)
    # Denormalised text for full-text search (signatures and tags live in other places).
    search_extra = models.TextField(blank=True)
    search_vector = SearchVectorField(null=True, editable=False)

    class Meta:
        ordering = ["title"]
        verbose_name_plural = "entries"
        # Broad searches walk this order and stop after a page of hits.
        indexes = [models.Index(F("matched_runs").desc(), F("fixed_count").desc(), "title", name="entry_usefulness")]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("notebook:entry", args=[self.slug])


class Signature(models.Model):
    class Kind(models.TextChoices):
        TEXT = "text", "Plain text"
        REGEX = "regex", "Regular expression"

    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="signatures")
    kind = models.CharField(max_length=5, choices=Kind.choices)
    pattern = models.CharField(max_length=500)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.pattern}"


class EntryRevision(models.Model):
    """A snapshot of an entry after each save: the edit history."""

    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="revisions")
    author = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    note = models.CharField(max_length=200, blank=True)
    snapshot = models.JSONField()

    class Meta:
        ordering = ["-created_at", "-pk"]


class StageMatch(models.Model):
    """An entry that matched a stage's log or diagnostics, with the matching lines."""

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="notebook_matches")
    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="matches")
    rank = models.PositiveSmallIntegerField()
    signature_count = models.PositiveSmallIntegerField()
    line_count = models.PositiveIntegerField()
    line_numbers = models.JSONField(default=list)
    lines = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rank"]
        constraints = [models.UniqueConstraint(fields=["stage", "entry"], name="unique_match_per_stage")]


class FixedVote(models.Model):
    """A user marked "this fixed it" on an entry (once per user)."""

    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="fixed_votes")
    user = models.ForeignKey(django_settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["entry", "user"], name="one_fixed_vote_per_user")]


class UnmatchedFailure(models.Model):
    """A failing diagnostic that no entry explained, by fingerprint (migrator/lib/signatures/fingerprints.py),
    counted across runs and teams: the notebook page lists the most frequent ones to write up."""

    fingerprint = models.CharField(max_length=20, unique=True)
    normalised = models.TextField()
    example = models.TextField()  # one raw line as a log showed it
    stage_name = models.CharField(max_length=20)
    toolchain = models.CharField(max_length=200, blank=True)
    occurrences = models.PositiveIntegerField(default=0)  # failed stages that showed it
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    resolved_by = models.ForeignKey(Entry, null=True, blank=True, on_delete=models.SET_NULL, related_name="resolved_failures")
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(F("occurrences").desc(), "last_seen", name="unmatched_by_count")]

    def __str__(self) -> str:
        return self.normalised[:80]


class FailureSighting(models.Model):
    """One failed stage that showed an unmatched failure (once per stage, so redelivery is harmless)."""

    failure = models.ForeignKey(UnmatchedFailure, on_delete=models.CASCADE, related_name="sightings")
    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="failure_sightings")
    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey("accounts.Team", on_delete=models.CASCADE, related_name="+")
    line = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["failure", "stage"], name="one_sighting_per_stage")]
