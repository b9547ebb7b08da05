"""Bearer-token authentication: the token's hash is looked up; the token row (and its team) is ``request.auth``."""
from __future__ import annotations

from datetime import timedelta

from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer

from migrator.api.models import ApiToken, hash_token

LAST_USED_RESOLUTION = timedelta(minutes=1)  # write last_used_at at most once a minute per token


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        if not token or len(token) > 200:
            return None
        found = ApiToken.objects.select_related("team").filter(token_hash=hash_token(token), revoked=False).first()
        if found is None:
            return None
        now = timezone.now()
        if found.last_used_at is None or now - found.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=found.pk).update(last_used_at=now)
        return found
