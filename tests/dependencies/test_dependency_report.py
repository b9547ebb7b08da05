"""The dependency section and the Python findings in the report (JSON, Markdown, page) and the scan panel,
while the resolves run and once they are done."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.dependencies.constants import ResolveState
from migrator.dependencies.models import DependencyResolve
from migrator.projects.models import Run
from tests.pytorch_projects.simple_index import SimpleIndex
from tests.stage_panels.panel_project import panel_of, run_project, stage_page

pytestmark = pytest.mark.django_db
FIXTURE = Path(__file__).resolve().parents[1] / "pytorch_projects" / "fixtures" / "tunefactory"


@pytest.fixture
def resolved_run(team_user: tuple[User, Team], only_stages: Callable[..., None], local_index: SimpleIndex) -> Run:
    """The fine-tuning fixture scanned in this process (``run_sync``: resolves run inline) against the local index."""
    only_stages("fetch", "scan")
    files = {p.relative_to(FIXTURE).as_posix(): p.read_text() for p in FIXTURE.rglob("*") if p.is_file()}
    return run_project(team_user, files)


def _json(client: Client, run: Run) -> dict[str, Any]:
    response = client.get(reverse("reports:run-json", args=[run.pk]))
    assert response.status_code == 200
    loaded: dict[str, Any] = json.loads(response.content)
    return loaded


def test_the_reports_list_python_findings_and_every_install_set(alice_client: Client, resolved_run: Run) -> None:
    report = _json(alice_client, resolved_run)
    python = report["python"]
    rules = {(f["rule_id"], f["file"]) for f in python["findings"]}
    env = "src/tunefactory/extras/env.py"
    assert {("python.torch-version-cuda", env), ("python.pynvml", env), ("python.nvidia-tool", env),
            ("python.autocast-fp16", env), ("llm-config.fp16-to-bf16", "examples/train_lora.yaml")} <= rules
    assert python["total"] == len(python["findings"]) > 0
    deps = report["dependencies"]
    assert deps["state"] == "final" and deps["rocm_version"] == "7.2" and deps["main_set"] == "pyproject.toml"
    assert [f["file"] for f in deps["rocm_files"]] == ["docker/docker-rocm/Dockerfile"]
    sets = {s["id"]: s for s in deps["sets"]}
    assert len(sets) == 19
    base = sets["pyproject.toml"]["resolution"]
    assert (base["state"], base["status"]) == ("done", "resolved")
    assert "torch==2.14.1+rocm7.2" in base["constraints"] and not any(c.startswith("nvidia") for c in base["constraints"])
    vllm = sets["requirements/vllm.txt"]
    assert vllm["resolution"]["state"] == "not_resolved"
    assert [(c["name"], c["action"]) for c in vllm["changes"]] == [("vllm", "image")]
    liger = sets["requirements/liger-kernel.txt"]["resolution"]
    assert liger["problems"][0].startswith("triton 3.8.0 from PyPI (pulled in by liger-kernel)")
    assert liger["notes"] == ["triton>=3.5 is provided by triton-rocm 3.8.0"]
    root = sets["requirements.txt"]
    assert root["torch"]["note"].startswith("torch==2.3.1 has no ROCm 7.2 build")
    assert not [c for s in deps["sets"] for c in s["resolution"].get("constraints", []) if c.startswith("nvidia")]
    markdown = alice_client.get(reverse("reports:run-markdown", args=[resolved_run.pk])).content.decode()
    assert "Python and configuration findings:" in markdown and "`python.pynvml`" in markdown
    assert "Dependencies for ROCm 7.2: 19 install sets" in markdown
    assert "`requirements/fp8-te.txt`" in markdown and "no ROCm build on PyPI: remove, or build AMD" in markdown
    page = alice_client.get(reverse("reports:run", args=[resolved_run.pk])).content.decode()
    assert "Dependencies for ROCm 7.2" in page and "python.torch-version-cuda" in page


def test_while_resolves_run_the_report_and_the_scan_panel_say_resolving(alice_client: Client, resolved_run: Run) -> None:
    DependencyResolve.objects.filter(pk=DependencyResolve.objects.order_by("pk").first().pk).update(  # type: ignore[union-attr]
        state=ResolveState.RUNNING, worker="deps@host")
    report = _json(alice_client, resolved_run)
    assert report["dependencies"]["state"] == "resolving" and report["dependencies"]["resolving"] >= 1
    markdown = alice_client.get(reverse("reports:run-markdown", args=[resolved_run.pk])).content.decode()
    assert "resolving…" in markdown and "⏳ Resolving…" in markdown
    panel = panel_of(stage_page(alice_client, resolved_run, "scan"))
    url = reverse("dependencies:run", args=[resolved_run.pk])
    assert f'hx-get="{url}"' in panel and "resolving… (worker deps@host)" in panel
    partial = alice_client.get(url)
    assert partial.status_code == 200 and b'data-state="resolving"' in partial.content  # keeps polling
    DependencyResolve.objects.update(state=ResolveState.DONE)
    final = alice_client.get(url)
    assert final.status_code == 286 and b'data-state="final"' in final.content  # htmx stops polling


def test_another_team_cannot_read_the_dependency_partial(
    client: Client, other_team_user: tuple[User, Team], team_user: tuple[User, Team], only_stages: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGRATOR_RESOLVE_DEPENDENCIES", "off")
    only_stages("fetch", "scan")
    run = run_project(team_user, {"requirements.txt": "torch==2.5.1\n", "train.py": "import torch\n"})
    client.force_login(other_team_user[0])
    assert client.get(reverse("dependencies:run", args=[run.pk])).status_code == 404
