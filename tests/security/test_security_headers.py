"""Deployment behind TLS: Secure cookies and HSTS unless plain http on loopback; a
Content-Security-Policy that every page satisfies (no inline scripts, styles or handlers)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from tests.conftest import make_tar_gz

ROOT = Path(__file__).resolve().parent.parent.parent
PROBE = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps([s.MIGRATOR_TLS, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS]))"
)


def _deployment(var_dir: Path, **env: str) -> tuple[int, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MIGRATOR_")}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True,
        env={**clean, "DJANGO_SETTINGS_MODULE": "migrator.settings", "MIGRATOR_VAR_DIR": str(var_dir), **env},
    )
    return proc.returncode, proc.stdout.strip() or proc.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(("env", "expected"), [
    ({}, [False, False, False, 0]),  # the development default: http://localhost:8000
    ({"MIGRATOR_PUBLIC_URL": "http://127.0.0.1:8000"}, [False, False, False, 0]),
    ({"MIGRATOR_PUBLIC_URL": "https://migrator.example.com"}, [True, True, True, 31536000]),
    ({"MIGRATOR_PUBLIC_URL": "http://migrator.example.com"}, [True, True, True, 31536000]),
    ({"MIGRATOR_PUBLIC_URL": "https://migrator.example.com", "MIGRATOR_TLS": "false"}, [False, False, False, 0]),
    ({"MIGRATOR_TLS": "true", "MIGRATOR_HSTS_SECONDS": "600"}, [True, True, True, 600]),
])
def test_tls_settings_follow_the_public_url_unless_set_explicitly(
    env: dict[str, str], expected: list[object], tmp_path: Path,
) -> None:
    code, out = _deployment(tmp_path, **env)
    assert code == 0, out
    assert json.loads(out) == expected


def test_a_bad_tls_value_stops_start_up(tmp_path: Path) -> None:
    code, out = _deployment(tmp_path, MIGRATOR_TLS="sometimes")
    assert code != 0 and "MIGRATOR_TLS must be true or false" in out


@pytest.mark.django_db
def test_behind_tls_cookies_are_secure_and_hsts_is_sent(
    client: Client, team_user: tuple[User, Team], settings: Settings
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.SECURE_HSTS_SECONDS = 31536000
    form = client.get("/login/", secure=True)
    assert form["Strict-Transport-Security"] == "max-age=31536000"
    assert form.cookies["csrftoken"]["secure"] is True
    signed_in = client.post("/login/", {"username": "alice", "password": "pw-alice-123"}, secure=True)
    assert signed_in.status_code == 302
    session = signed_in.cookies[settings.SESSION_COOKIE_NAME]
    assert session["secure"] is True and session["httponly"] is True and session["samesite"] == "Lax"


class _InlineCode(HTMLParser):
    """Everything a policy without 'unsafe-inline' would block."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "script" and "src" not in names and names.get("type") not in ("application/json",):
            self.found.append("inline <script>")
        if tag == "style":
            self.found.append("<style> element")
        for name, value in attrs:
            if name == "style" or name.startswith("on") or name.startswith("hx-on"):
                self.found.append(f"<{tag} {name}=...>")
            if name in ("href", "src", "action") and (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}=javascript:...>")


def _inline_code(html: str) -> list[str]:
    parser = _InlineCode()
    parser.feed(html)
    return parser.found


@pytest.mark.django_db
def test_every_page_carries_the_policy_and_needs_nothing_inline(
    alice_client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None], settings: Settings
) -> None:
    only_stages("fetch", "scan", "hipify")
    user, team = team_user
    project = actions.create_project(team, "csp", user=user)
    files = {"src/a/vadd.cu": "__global__ void k(float* x) { x[threadIdx.x] = 1; }\n", "src/b/c/util.cu": "int f();\n"}
    actions.store_archive(project, SimpleUploadedFile("c.tgz", make_tar_gz(files)), "c.tgz", user)
    run = run_sync(actions.create_run(project, user=user))
    pages = ["/", f"/projects/{project.pk}/", f"/projects/{project.pk}/settings", f"/runs/{run.pk}/",
             f"/runs/{run.pk}/?stage=scan", f"/runs/{run.pk}/files/", f"/runs/{run.pk}/files/src/a/vadd.cu", "/notebook/", "/notebook/new",
             "/runners/", f"/runs/{run.pk}/report", "/api/v1/docs"]
    for path in pages:
        response = alice_client.get(path)
        assert response.status_code == 200, path
        policy = response["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "style-src 'self'" in policy and "unsafe-inline" not in policy
        assert _inline_code(response.content.decode()) == [], path
    alice_client.logout()
    assert _inline_code(alice_client.get("/admin/login/").content.decode()) == []
    login = alice_client.get("/login/")
    assert login["Content-Security-Policy"] and _inline_code(login.content.decode()) == []
    assert login["X-Frame-Options"] == "DENY" and login["X-Content-Type-Options"] == "nosniff"
