"""The per-project integration settings page."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.integrations.models import ProjectIntegration
from migrator.projects import actions

pytestmark = pytest.mark.django_db


def test_it_saves_settings_and_keeps_secrets_left_empty(
    alice_client: Client, team_user: tuple[User, Team], settings: Settings
) -> None:
    settings.MIGRATOR_ALLOWED_HOST_API_BASES = [*settings.MIGRATOR_ALLOWED_HOST_API_BASES, "https://git.example.com/api/v4"]
    project = actions.create_project(team_user[1], "demo", user=None, git_url="https://github.com/acme/demo.git")
    url = f"/projects/{project.pk}/integration"
    page = alice_client.get(url)
    assert page.status_code == 200 and f"/hooks/github/{project.pk}".encode() in page.content
    form = {"host_kind": "github", "host_api_url": "", "repository": "", "host_token": "tok-1",
            "webhook_secret": "", "gitlab_token": "", "post_statuses": "on", "post_comments": "on",
            "generate_webhook_secret": "on"}
    response = alice_client.post(url, form, follow=True)
    integration = ProjectIntegration.objects.get(project=project)
    assert len(integration.webhook_secret) == 48 and integration.host_token == "tok-1"
    assert integration.webhook_secret.encode() in response.content  # shown once, right after generating
    form |= {"host_token": "", "generate_webhook_secret": "", "host_api_url": "https://git.example.com/api/v4"}
    alice_client.post(url, form)
    kept = ProjectIntegration.objects.get(project=project)
    assert (kept.host_token, kept.webhook_secret, kept.api_url) == ("tok-1", integration.webhook_secret, "https://git.example.com/api/v4")
    assert b"tok-1" not in alice_client.get(url).content


def test_another_team_cannot_open_it(
    client: Client, team_user: tuple[User, Team], other_team_user: tuple[User, Team]
) -> None:
    project = actions.create_project(team_user[1], "demo", user=None, git_url="https://github.com/acme/demo.git")
    client.force_login(other_team_user[0])
    assert client.get(f"/projects/{project.pk}/integration").status_code == 404
