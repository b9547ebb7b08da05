"""Repeated bad API tokens from one address back off with 429 and Retry-After."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from migrator.api.models import create_token

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse  # what Client's methods return

pytestmark = pytest.mark.django_db


def _get(client: Client, token: str, address: str = "198.51.100.20") -> TestResponse:
    return client.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {token}", REMOTE_ADDR=address)


def test_bad_tokens_from_one_address_are_locked_out_then_even_a_good_one(
    client: Client, team_user: tuple[User, Team]
) -> None:
    good = create_token(team_user[1], "ci")[1]
    assert _get(client, good).status_code == 200
    for i in range(10):
        assert _get(client, f"mgr_guess{i}").status_code == 401
    locked = _get(client, "mgr_guess-next")
    assert locked.status_code == 429 and locked["Retry-After"] == "30"
    assert locked.json() == {"detail": "Too many failed attempts. Try again in 30 seconds."}
    assert _get(client, good).status_code == 429  # no more guesses checked from there while locked
    assert _get(client, good, address="203.0.113.30").status_code == 200  # other clients are not affected


def test_good_tokens_never_count_as_failures(client: Client, team_user: tuple[User, Team]) -> None:
    good = create_token(team_user[1], "ci")[1]
    for _ in range(30):
        assert _get(client, good).status_code == 200
    assert _get(client, "mgr_wrong").status_code == 401
