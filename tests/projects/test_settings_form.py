"""Project settings as a form: every key documented, each bad field with its own message, JSON kept."""
from __future__ import annotations

import dataclasses

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from migrator.accounts.models import Team
from migrator.projects import actions
from migrator.projects.models import Project
from migrator.projects.settings_help import GROUPS, HELP
from worker.project_settings import ProjectSettings

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    return actions.create_project(team_user[1], "p", user=None, git_url="https://example.com/r.git")


def form_data(page_fields: dict[str, str]) -> dict[str, str]:
    """What the browser posts: every field with its shown value, then the user's edits."""
    values = {name: "" for name in HELP} | {
        "hipify_engine": "builtin", "launch_style": "chevron", "build_mode": "auto", "link_target": "auto",
        "exclude_globs": "third_party/**\nthirdparty/**\nexternal/**\nvendor/**\n**/.git/**", "offload_archs": "gfx90a",
        "compile_timeout_s": "300", "build_timeout_s": "1800", "build_memory_mb": "8192", "workspace_mb": "10240", "smoke_timeout_s": "300",
        "smoke_expected_exit": "0", "smoke_compare_reference": "on", "smoke_wait_timeout_s": "1800",
        "smoke_output_limit_bytes": "1000000", "mode": "fields",
    }
    values.pop("roc_libraries"), values.pop("rename_cu_to_hip")  # unchecked boxes are not posted
    return values | page_fields


def test_every_setting_is_documented_and_grouped() -> None:
    names = {f.name for f in dataclasses.fields(ProjectSettings)}
    assert names == set(HELP) == {n for _, group in GROUPS for n in group}


def test_the_form_shows_each_field_with_help(alice_client: Client, project: Project) -> None:
    page = alice_client.get(reverse("projects:settings", args=[project.pk])).content.decode()
    for name in ("target_hip_version", "extra_flags", "compile_timeout_s", "smoke_command"):
        block = page[page.index(f'id="setting-{name}"'):].split("</div>")[0]
        assert escape(HELP[name])[:40] in page and f'name="{name}"' in block
    assert 'id="settings-json"' in page  # JSON kept for advanced use


def test_bad_fields_each_get_their_own_message(alice_client: Client, project: Project) -> None:
    url = reverse("projects:settings", args=[project.pk])
    answer = alice_client.post(url, form_data({"offload_archs": "sm_80", "cxx_std": "c++99", "compile_timeout_s": "0",
                                               "smoke_checks": "[{", "exclude_globs": "vendor/**\n!vendor/keep.cu"}))
    page = answer.content.decode()
    assert answer.status_code == 200
    for name, message in (("offload_archs", "not an AMD GPU target"), ("cxx_std", "not a C++ dialect"),
                          ("compile_timeout_s", "must be between 1 and"), ("smoke_checks", "not valid JSON"),
                          ("exclude_globs", "cannot take a path back in")):
        block = page[page.index(f'id="setting-{name}"'):].split('<p class="help')[0]
        assert "field-errors" in block and message in block, name
    project.refresh_from_db()
    assert project.settings == {}


def test_good_fields_store_only_differences(alice_client: Client, project: Project) -> None:
    url = reverse("projects:settings", args=[project.pk])
    answer = alice_client.post(url, form_data({
        "offload_archs": "gfx90a\ngfx942", "extra_flags": "-fgpu-rdc\n-Wl,--as-needed", "target_hip_version": "6.4",
        "smoke_command": "./vadd", "smoke_checks": '[{"kind": "text", "pattern": "ok"}]',
    }))
    assert answer.status_code == 302
    project.refresh_from_db()
    assert project.settings == {
        "offload_archs": ["gfx90a", "gfx942"], "extra_flags": ["-fgpu-rdc", "-Wl,--as-needed"], "target_hip_version": "6.4",
        "smoke_command": "./vadd", "smoke_checks": [{"kind": "text", "pattern": "ok"}],
    }
