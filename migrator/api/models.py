"""API tokens: team-scoped, stored only as a SHA-256 hash (the token is shown once when made)."""
from __future__ import annotations

import hashlib
import secrets

from django.db import models

from migrator.accounts.models import Team

TOKEN_PREFIX = "mgr_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token_value() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class ApiToken(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    # The first characters, so an operator can tell tokens apart without the secret.
    hint = models.CharField(max_length=12, editable=False)
    revoked = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name or 'token'} ({self.hint}…) for {self.team}"


def create_token(team: Team, name: str = "") -> tuple[ApiToken, str]:
    """Make a token for ``team``; returns the row and the plain token, which is not stored."""
    value = new_token_value()
    token = ApiToken.objects.create(team=team, name=name, token_hash=hash_token(value), hint=value[:12])
    return token, value
