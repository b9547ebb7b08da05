"""Per-project links to a code host: webhook secrets, the host API token, and received deliveries."""
from __future__ import annotations

from django.core.validators import URLValidator
from django.db import models

from migrator.integrations.hostpolicy import validate_host_api_url
from migrator.projects.models import Project, Run

GITHUB_API_URL = "https://api.github.com"
GITLAB_API_URL = "https://gitlab.com/api/v4"


class HostKind(models.TextChoices):
    GITHUB = "github", "GitHub"
    GITLAB = "gitlab", "GitLab"


class ProjectIntegration(models.Model):
    """Secrets are kept readable: HMAC checks and API calls need the plain values."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="integration")
    webhook_secret = models.CharField(
        max_length=200, blank=True, help_text="GitHub webhook secret (HMAC-SHA256 of the body)"
    )
    gitlab_token = models.CharField(
        max_length=200, blank=True, help_text="GitLab webhook secret token (sent as X-Gitlab-Token)"
    )
    host_kind = models.CharField(max_length=10, choices=HostKind.choices, default=HostKind.GITHUB)
    host_api_url = models.CharField(
        max_length=300, blank=True, validators=[URLValidator(schemes=["http", "https"]), validate_host_api_url],
        help_text="empty: https://api.github.com or https://gitlab.com/api/v4; others only when an administrator "
                  "allowed them (MIGRATOR_ALLOWED_HOST_API_BASES)",
    )
    host_token = models.CharField(
        max_length=300, blank=True, help_text="token allowed to post commit statuses and PR comments"
    )
    repository = models.CharField(
        max_length=300, blank=True,
        help_text="owner/name (GitHub) or group/project (GitLab) for push statuses; empty: from the PR URL",
    )
    post_statuses = models.BooleanField(default=True)
    post_comments = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"integration of {self.project}"

    @property
    def api_url(self) -> str:
        default = GITLAB_API_URL if self.host_kind == HostKind.GITLAB else GITHUB_API_URL
        return (self.host_api_url or default).rstrip("/")

    @property
    def can_post(self) -> bool:
        return bool(self.host_token) and (self.post_statuses or self.post_comments)


class Skipped(models.TextChoices):
    """Why a recorded delivery started no run (empty: it did, or will)."""

    NO = "", "started a run"
    DUPLICATE = "duplicate", "the same change as an earlier delivery"
    RATE_LIMITED = "rate_limited", "over the project's hourly bound"


class WebhookDelivery(models.Model):
    """One received delivery; the unique key makes a replayed delivery start nothing twice.

    Delivery ids are unique per project (one integration each), never across projects: a delivery
    for one project that reuses another project's id is its own delivery, and learns nothing of the other.
    A delivery under a fresh id that asks for the same change as a recent one, or one over the project's
    hourly bound, is recorded with ``skipped`` and ``skip_reason`` and starts nothing.
    """

    provider = models.CharField(max_length=10, choices=HostKind.choices)
    delivery_id = models.CharField(max_length=100)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhook_deliveries")
    event = models.CharField(max_length=50)
    action = models.CharField(max_length=50, blank=True)
    head_sha = models.CharField(max_length=64, blank=True)
    pr_url = models.CharField(max_length=500, blank=True)
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    error = models.CharField(max_length=500, blank=True)
    skipped = models.CharField(max_length=20, choices=Skipped.choices, blank=True, default=Skipped.NO)
    skip_reason = models.CharField(max_length=300, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "provider", "delivery_id"], name="unique_project_webhook_delivery"),
        ]
        # The duplicate and hourly-bound checks look at one project's recent deliveries.
        indexes = [models.Index(fields=["project", "received_at"], name="delivery_project_recent_idx")]
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.provider} {self.delivery_id}"
