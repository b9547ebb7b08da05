"""What was posted back to the code host for a run, and the one report comment kept per pull request."""
from __future__ import annotations

from django.db import models

from migrator.projects.models import Project, Run


class PostKind(models.TextChoices):
    STATUS = "status", "Commit status"
    COMMENT = "comment", "Report comment"


class PostPhase(models.TextChoices):
    START = "start", "Run started"
    FINAL = "final", "Run finished"


class StatusPost(models.Model):
    """One attempt series (with retries) to post a status or the comment; failures are shown on the run."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="status_posts")
    kind = models.CharField(max_length=10, choices=PostKind.choices)
    phase = models.CharField(max_length=10, choices=PostPhase.choices)
    target = models.CharField(max_length=500)
    ok = models.BooleanField(default=False)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.kind} {self.phase} for {self.run}: {'ok' if self.ok else 'failed'}"


class PrComment(models.Model):
    """The host's id of our report comment on a pull request, so later runs update it in place."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="pr_comments")
    pr_url = models.CharField(max_length=500)
    comment_id = models.CharField(max_length=100, blank=True)
    # The run whose report the comment shows: an older run finishing late never overwrites a newer one.
    run_number = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "pr_url"], name="unique_pr_comment")]

    def __str__(self) -> str:
        return f"comment {self.comment_id or '(none yet)'} on {self.pr_url}"
