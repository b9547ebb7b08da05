"""Repeated bad API tokens from one address get growing delays (429 with Retry-After); a valid token always
passes, and the counts go on when Redis is down."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.api.models import create_token

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse  # what Client's methods return

pytestmark = pytest.mark.django_db


def _get(client: Client, token: str, address: str = "198.51.100.20") -> TestResponse:
    return client.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {token}", REMOTE_ADDR=address)


def test_bad_tokens_from_one_address_are_delayed_and_a_good_one_still_passes(
    client: Client, team_user: tuple[User, Team]
) -> None:
    good = create_token(team_user[1], "ci")[1]
    assert _get(client, good).status_code == 200
    for i in range(10):
        assert _get(client, f"mgr_guess{i}").status_code == 401
    delayed = _get(client, "mgr_guess-next")
    assert delayed.status_code == 429 and delayed["Retry-After"] == "30"
    assert delayed.json() == {"detail": "Too many failed attempts. Try again in 30 seconds."}
    assert _get(client, "mgr_guess-again")["Retry-After"] == "60"  # each further bad token waits longer
    assert _get(client, good).status_code == 200  # someone else's bad tokens never refuse a valid one
    assert _get(client, "mgr_guess-other", address="203.0.113.30").status_code == 401  # other clients unaffected


def test_with_redis_down_bad_tokens_are_still_counted(
    client: Client, team_user: tuple[User, Team], settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0",
                     "OPTIONS": {"socket_connect_timeout": 1}},
    }
    good = create_token(team_user[1], "ci")[1]
    for i in range(10):
        assert _get(client, f"mgr_guess{i}").status_code == 401
    assert _get(client, "mgr_guess-next").status_code == 429
    assert _get(client, good).status_code == 200
    assert any("throttle store unreachable" in r.getMessage() for r in caplog.records)


def test_good_tokens_never_count_as_failures(client: Client, team_user: tuple[User, Team]) -> None:
    good = create_token(team_user[1], "ci")[1]
    for _ in range(30):
        assert _get(client, good).status_code == 200
    assert _get(client, "mgr_wrong").status_code == 401
