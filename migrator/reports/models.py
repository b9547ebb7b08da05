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


class PortState(models.TextChoices):
    """Where a delivery of the port into the team's repository stands."""

    PROPOSED = "proposed", "Pushed and proposed as a pull request"
    PUSHED = "pushed", "Pushed (no host token: no pull request)"
    BUNDLED = "bundled", "Ready as a git bundle (nothing pushed)"
    VERIFYING = "verifying", "Built for ROCm; the CUDA check is with a CUDA runner"
    CUDA_BROKEN = "cuda_broken", "Not proposed: the CUDA build fails on the delivered branch"
    ROCM_BROKEN = "rocm_broken", "Not proposed: the ROCm build fails on the delivered branch"
    FAILED = "failed", "Failed"


class PortDelivery(models.Model):
    """The port branch of one project, target branch and delivery mode: one pull request, kept in sync.

    ``generated`` is what the last delivery wrote (path -> sha256, "" for a deletion), so the next one
    tells the team's hand edits from ours; ``last_commit``/``base_commit`` are that delivery's commit
    and the CUDA commit it was composed on."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="port_deliveries")
    target_branch = models.CharField(max_length=200)
    mode = models.CharField(max_length=20, default="single-source")
    branch = models.CharField(max_length=200)
    last_commit = models.CharField(max_length=64, blank=True)
    base_commit = models.CharField(max_length=64, blank=True)
    generated = models.JSONField(default=dict)
    pr_number = models.PositiveIntegerField(null=True, blank=True)
    pr_url = models.CharField(max_length=500, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "target_branch", "mode"], name="unique_port_delivery")]

    def __str__(self) -> str:
        return f"{self.mode} port of {self.project} onto {self.target_branch} as {self.branch}"


class PortAttempt(models.Model):
    """One delivery of one run: what it composed, how both builds went, what it pushed and proposed."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="port_attempts")
    delivery = models.ForeignKey(PortDelivery, on_delete=models.CASCADE, related_name="attempts")
    state = models.CharField(max_length=20, choices=PortState.choices)
    commit = models.CharField(max_length=64, blank=True)
    rocm = models.JSONField(default=dict)  # worker.delivery.verify.SideResult
    cuda = models.JSONField(default=dict)
    conflicts = models.JSONField(default=list)  # [{path, regenerated, hand, against}]
    kept_hand = models.JSONField(default=list)
    examined = models.JSONField(default=list)
    lines = models.JSONField(default=dict)  # files, added, removed against the CUDA commit
    notes = models.JSONField(default=list)
    error = models.CharField(max_length=500, blank=True)
    bundle = models.CharField(max_length=500, blank=True)  # a path under the run's folder
    commands = models.TextField(blank=True)  # the git commands that apply it by hand
    # While VERIFYING: what offering it needs once the CUDA runner's check passed (head, push, generated, base)
    pending = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.get_state_display()} for {self.run}"
