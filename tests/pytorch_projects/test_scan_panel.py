"""The run page's scan panel for a PyTorch project: kind, Python findings, dependency report."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from tests.stage_panels.panel_project import panel_of, run_project, stage_page

pytestmark = pytest.mark.django_db
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "finetune"


def test_the_scan_panel_shows_kind_python_findings_and_rocm_counterparts(
    alice_client: Client,
    team_user: tuple[User, Team],
    only_stages: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MIGRATOR_RESOLVE_DEPENDENCIES", "off")
    only_stages("fetch", "scan")
    files = {p.relative_to(FIXTURE).as_posix(): p.read_text() for p in FIXTURE.rglob("*") if p.is_file()}
    run = run_project(team_user, files)
    panel = panel_of(stage_page(alice_client, run, "scan"))
    assert "<h3>Project kind: python-app</h3>" in panel
    assert "already ships ROCm files: <code>docker/docker-rocm/Dockerfile</code>" in panel
    findings = panel[panel.index('id="scan-python-findings"'):panel.index('id="scan-dependencies"')]
    assert "<code>src/tunekit/train.py:16</code>" in findings and "auto-fix" in findings
    assert 'href="/notebook/' in findings
    deps = panel[panel.index('id="scan-dependencies"'):]
    assert "amdsmi, the AMD SMI Python library shipped with ROCm; pip install /opt/rocm/share/amd_smi" in deps
    assert "<code>torch==2.14.1+rocm7.2</code>" in deps and "checked 2026-12-01" in deps
    assert "<code>environment.yml</code>" in deps and "resolution is turned off" in deps
    assert "<code>requirements-rocm.txt</code>" in deps
