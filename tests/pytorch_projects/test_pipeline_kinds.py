"""A fine-tuning project through the whole pipeline (``migrate_repo``): scanned as a Python
application, translated with its Python fixes and ROCm requirements, compile and link not
applicable (never failed, never passed)."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from migrator.accounts.models import Team
from migrator.projects.models import Run

pytestmark = pytest.mark.django_db


def test_a_fine_tuning_project_runs_through_the_pipeline(
    team_user: tuple[User, Team], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGRATOR_RESOLVE_DEPENDENCIES", "off")
    source = tmp_path / "tunekit"
    shutil.copytree(Path(__file__).resolve().parent / "fixtures" / "finetune", source)
    report = tmp_path / "report.json"
    out = io.StringIO()
    try:
        call_command("migrate_repo", str(source), "--report", str(report), stdout=out)
    except SystemExit:
        pass
    stages = {s.name: s for s in Run.objects.get().stages.all()}
    assert stages["scan"].state == "passed" and stages["scan"].summary.startswith("python-app; ")
    assert stages["hipify"].state == "passed"
    assert stages["hipify"].data["generated_files"] == ["requirements-rocm.txt"]
    for name in ("compile", "link"):
        assert stages[name].state not in ("passed", "failed"), (name, stages[name].summary)
        assert stages[name].data["reason"] and "not applicable (python-app)" in stages[name].summary
    assert json.loads(report.read_text())["stages"][3]["name"] == "compile"
