"""The sign-in page (migrator.accounts.login): a team member signs in and reaches the projects."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team

pytestmark = pytest.mark.django_db


def test_login_page_signs_in(client: Client, team_user: tuple[User, Team]) -> None:
    response = client.post(reverse("login"), {"username": "alice", "password": "pw-alice-123"})
    assert response.status_code == 302
    assert client.get(reverse("projects:list")).status_code == 200

