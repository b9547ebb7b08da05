"""Bearer-token authentication: the token's hash is looked up; the token row (and its team) is ``request.auth``.

Repeated bad tokens from one client address get growing delays (``migrator.accounts.throttle``): while
the address waits, a bad token is answered 429 with Retry-After. A valid token is always let through,
whatever others sent from the same address: tokens are 256-bit random, so nothing is guessed that way.
"""
from __future__ import annotations

from datetime import timedelta

from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer

from migrator.accounts import throttle
from migrator.api.models import ApiToken, hash_token

LAST_USED_RESOLUTION = timedelta(minutes=1)  # write last_used_at at most once a minute per token


class Throttled(Exception):
    def __init__(self, wait_s: int) -> None:
        super().__init__(throttle.wait_message(wait_s))
        self.wait_s = wait_s


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        found = None
        if token and len(token) <= 200:
            found = ApiToken.objects.select_related("team").filter(token_hash=hash_token(token), revoked=False).first()
        if found is None:
            policy, address = throttle.token_address_policy(), throttle.address_key(throttle.client_address(request))
            wait = max(throttle.record_failure(policy, address), throttle.wait_s(policy, address))
            if wait:
                raise Throttled(wait)
            return None
        now = timezone.now()
        if found.last_used_at is None or now - found.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=found.pk).update(last_used_at=now)
        return found
