"""The operator's maximums for per-project limits: refused on save (form, API, migrate_repo) with the
setting and the cap named; a stored value above a cap lowered later runs at the cap."""
from __future__ import annotations

import io

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.api.models import create_token
from migrator.projects import actions
from migrator.projects.models import Project
from tests.projects.test_settings_form import form_data
from worker.project_settings import CAPPED, ProjectSettings, SettingsError

pytestmark = pytest.mark.django_db
ONE_TIB_MB = 1 << 20
MESSAGE = "build_memory_mb: 1048576 is above this server's maximum of 32768 (set by the operator as MIGRATOR_MAX_BUILD_MEMORY_MB)"


@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    return actions.create_project(team_user[1], "capped", user=None, git_url="https://example.com/r.git")


def test_every_capped_limit_has_an_operator_maximum_at_least_its_default() -> None:
    caps = django_settings.MIGRATOR_SETTING_CAPS
    assert set(caps) == set(CAPPED)
    assert all(getattr(ProjectSettings(), name) <= caps[name] for name in CAPPED)


def test_a_one_tib_memory_limit_is_refused_naming_the_setting_and_the_cap() -> None:
    with pytest.raises(SettingsError) as refused:
        ProjectSettings.from_dict({"build_memory_mb": ONE_TIB_MB}, caps=django_settings.MIGRATOR_SETTING_CAPS)
    assert str(refused.value) == MESSAGE
    assert ProjectSettings.from_dict({"build_memory_mb": 32768}, caps=django_settings.MIGRATOR_SETTING_CAPS)


def test_the_settings_form_refuses_it_on_the_field(alice_client: Client, project: Project) -> None:
    url = reverse("projects:settings", args=[project.pk])
    answer = alice_client.post(url, form_data({"build_memory_mb": str(ONE_TIB_MB), "build_timeout_s": "86400"}))
    page = answer.content.decode()
    assert answer.status_code == 200 and "is above this server&#x27;s maximum of 32768" in page
    assert "MIGRATOR_MAX_BUILD_TIMEOUT_S" in page
    project.refresh_from_db()
    assert project.settings == {}


def test_the_api_refuses_it(client: Client, team_user: tuple[User, Team], project: Project) -> None:
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {create_token(team_user[1], 'ci')[1]}"
    answer = client.put(f"/api/v1/projects/{project.pk}/settings", {"build_memory_mb": ONE_TIB_MB},
                        content_type="application/json")
    assert answer.status_code == 400 and answer.json()["detail"] == MESSAGE
    project.refresh_from_db()
    assert project.settings == {}


def test_migrate_repo_refuses_it_before_anything_runs(team_user: tuple[User, Team]) -> None:
    with pytest.raises(CommandError, match="build_memory_mb: 1048576 is above this server's maximum"):
        call_command("migrate_repo", "https://example.com/r.git", "--project", "cli-capped",
                     "--project-settings", '{"build_memory_mb": 1048576}', stdout=io.StringIO(), stderr=io.StringIO())
    assert not Project.objects.filter(name="cli-capped", settings__build_memory_mb=ONE_TIB_MB).exists()


def test_a_value_stored_before_the_cap_was_lowered_runs_at_the_cap(settings: Settings) -> None:
    stored = ProjectSettings.from_dict({"build_memory_mb": 16384, "workspace_mb": 4096})
    settings.MIGRATOR_SETTING_CAPS = {**django_settings.MIGRATOR_SETTING_CAPS, "build_memory_mb": 2048}
    running = stored.within(settings.MIGRATOR_SETTING_CAPS)
    assert running.build_memory_mb == 2048 and running.workspace_mb == 4096
