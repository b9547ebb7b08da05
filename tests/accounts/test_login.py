"""The sign-in page (migrator.accounts.login): a team member signs in and reaches the projects."""
from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_login_page_signs_in(client, team_user) -> None:  # type: ignore[no-untyped-def]
    response = client.post(reverse("login"), {"username": "alice", "password": "pw-alice-123"})
    assert response.status_code == 302
    assert client.get(reverse("projects:list")).status_code == 200

