"""Scan and hipify panels on the run page, from a real pipeline run over a realistic CUDA project."""
from __future__ import annotations

import html
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.projects.models import Run
from tests.stage_panels.panel_project import (
    HOSTILE_NAME,
    assert_no_raw_hostile,
    panel_of,
    run_project,
    stage_page,
    translation_project,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def translated_run(team_user: tuple[User, Team], only_stages: Callable[..., None]) -> Run:
    only_stages("fetch", "scan", "hipify")
    run = run_project(team_user, translation_project(), {"target_hip_version": "5.2"})
    assert run.stages.get(name="hipify").state == "passed"
    return run


def test_scan_panel_shows_the_inventory_and_readiness(alice_client: Client, translated_run: Run) -> None:
    panel = panel_of(stage_page(alice_client, translated_run, "scan"))
    assert "<td>CUDA</td><td class=\"num\">3</td>" in panel  # three .cu files by language
    assert "<code>src/graph.cu</code>" in panel and html.escape(HOSTILE_NAME) in panel  # CUDA-bearing files
    assert "<code>reduce</code>" in panel and "<code>src/graph.cu:3</code>" in panel  # kernel and where
    assert "<code>src/vadd.cu:15</code>" in panel  # the vadd<<<...>>> launch site
    apis = panel[panel.index('id="scan-apis"'):panel.index('id="scan-constructs"')]
    assert "<td>CUDA runtime</td>" in apis  # API use by library
    assert apis.index("<code>cudaMalloc</code>") < apis.index("<code>cudaGetErrorString</code>") < apis.index("<code>cudaFooBar</code>")
    constructs = panel[panel.index('id="scan-constructs"'):panel.index('id="scan-wavefront"')]
    assert "inline-ptx" in constructs and "<code>src/graph.cu:6</code>" in constructs  # no automatic path
    wavefront = panel[panel.index('id="scan-wavefront"'):panel.index('id="scan-build"')]
    assert "<code>src/graph.cu:5</code>" in wavefront and "<code>full-mask-32</code>" in wavefront
    assert "auto-fix" in wavefront and "0xffffffffffffffffull" in wavefront
    assert "<code>CMakeLists.txt</code>" in panel and "<code>requirements.txt</code>" in panel
    readiness = panel[panel.index('id="scan-readiness"'):panel.index("CUDA-bearing files")]
    assert "%" in readiness and "<code>cudaFooBar</code>" in readiness  # share and hand work
    data = translated_run.stages.get(name="scan").data["readiness"]
    hand = readiness[readiness.index('id="scan-hand-work"'):]
    assert f"<strong>{data['hand_work']}</strong>" in hand and "inline-ptx 1" in hand  # the same list as the constructs


def test_scan_panel_groups_findings_by_severity_then_file(alice_client: Client, translated_run: Run) -> None:
    panel = panel_of(stage_page(alice_client, translated_run, "scan"))
    errors = panel[panel.index('id="findings-error"'):]
    assert errors.index("<code>CMakeLists.txt</code>") < errors.index("<code>Dockerfile</code>") < errors.index("<code>requirements.txt</code>")
    assert "cmake.find-package-cuda" in errors and "container.nvidia-base-image" in errors
    assert "dependencies.cuda-local-version" in errors and "<code>+cu118</code>" in errors
    assert '<code class="replacement">find_package(hip REQUIRED)\nfind_package(hipblas REQUIRED)</code>' in errors
    # CMake cannot build a .cu source as HIP without it: an error, as its effect is a build that fails
    assert "cmake.cu-source-language" in errors
    assert f'href="{reverse("notebook:entry", args=["cmake-findcuda"])}"' in errors
    assert f'href="{reverse("notebook:entry", args=["cuda-python-wheels"])}"' in errors


def test_scan_panel_loads_explanations_from_the_artifact(alice_client: Client, translated_run: Run) -> None:
    from migrator.projects.workspaces import workspace_for
    from worker.scanning.findings import scan_build_files

    full = scan_build_files(workspace_for(translated_run.pk).source, ())
    docker = next(f for f in full if f.rule_id == "container.nvidia-base-image")
    assert docker.explanation
    panel = panel_of(stage_page(alice_client, translated_run, "scan"))
    assert html.escape(docker.explanation) in panel


def test_hipify_panel_shows_per_file_counts_and_unconverted_names(alice_client: Client, translated_run: Run) -> None:
    hipify = translated_run.stages.get(name="hipify").data
    panel = panel_of(stage_page(alice_client, translated_run, "hipify"))
    totals = panel[panel.index('id="hipify-totals"'):panel.index('id="hipify-files"')]
    assert f"<strong>{hipify['totals']['converted_total']}</strong> references" in totals
    assert "<code>cudaGraphInstantiateWithParams</code>" in totals
    rows = {f["path"]: f for f in hipify["files"]}
    vadd_row = panel[panel.index("<code>src/vadd.cu</code>"):].split("</tr>")[0]
    assert f'<td class="num">{rows["src/vadd.cu"]["converted_total"]}</td>' in vadd_row
    assert '<span class="chip">memory 6</span>' in vadd_row  # three cudaMalloc and three cudaFree
    graph_row = panel[panel.index("<code>src/graph.cu</code>"):].split("</tr>")[0]
    unconverted = {u["name"]: u for u in rows["src/graph.cu"]["unconverted"]}["cudaGraphInstantiateWithParams"]
    assert unconverted["line"] == 11
    assert f"<code>cudaGraphInstantiateWithParams</code> <span class=\"muted\">11:{unconverted['column']}" in graph_row
    assert "<code>cudaFooBar</code> 12:" in graph_row


def test_hipify_panel_lists_the_applied_build_file_fixes(alice_client: Client, translated_run: Run) -> None:
    panel = panel_of(stage_page(alice_client, translated_run, "hipify"))
    fixes = panel[panel.index('id="hipify-build-fixes"'):]
    assert "<code>CMakeLists.txt:4</code>" in fixes and "cmake.findcuda-macro" in fixes
    assert '<code class="before">cuda_add_executable(vadd src/vadd.cu)</code>' in fixes
    assert '<code class="after">add_executable(vadd src/vadd.cu)\nset_source_files_properties(src/vadd.cu PROPERTIES LANGUAGE HIP)</code>' in fixes
    assert '<code class="after">RUN hipcc --version</code>' in fixes
    assert "1 found, 1 fixed automatically" in panel[panel.index('id="hipify-wavefront"'):]
    hazards = panel[panel.index('id="hipify-wavefront-hazards"'):panel.index('id="hipify-files"')]
    assert "<code>src/graph.cu:5</code>" in hazards and "wavefront.full-mask-64" in hazards


def test_hostile_file_names_and_code_are_escaped(alice_client: Client, translated_run: Run) -> None:
    for stage in ("fetch", "scan", "hipify"):
        page = stage_page(alice_client, translated_run, stage)
        assert_no_raw_hostile(page)
    assert html.escape(HOSTILE_NAME) in stage_page(alice_client, translated_run, "hipify")
