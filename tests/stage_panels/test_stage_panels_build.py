"""Compile and link panels from real hipcc runs: per-file results, diagnostics linked to source lines."""
from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.models import Project, Run
from migrator.projects.stage_panels import review_url
from tests.conftest import VADD_CU
from tests.stage_panels.panel_project import (
    BROKEN_CU,
    UNDEFINED_CU,
    assert_no_raw_hostile,
    panel_of,
    run_project,
    stage_page,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def compiled_run(team_user: tuple[User, Team], only_stages: Callable[..., None]) -> Run:
    only_stages("fetch", "hipify", "compile")
    run = run_project(team_user, {"src/vadd.cu": VADD_CU, "src/broken.cu": BROKEN_CU})
    assert run.stages.get(name="compile").state == "failed"
    return run


def test_compile_panel_lists_per_file_results_and_the_toolchain(alice_client: Client, compiled_run: Run) -> None:
    data = compiled_run.stages.get(name="compile").data
    panel = panel_of(stage_page(alice_client, compiled_run, "compile"))
    assert f"<code>{data['toolchain']['hipcc_version']}</code>" in panel and "<code>gfx90a</code>" in panel
    assert f"<code>{data['toolchain']['rocm_path']}</code>" in panel
    present = [lib["name"] for lib in data["toolchain"]["libraries"] if lib["installed"]]
    assert present and all(f'<span class="chip">{name}</span>' in panel for name in present)  # what the root holds
    assert 'id="missing-libraries"' not in panel  # no failure here comes from a library the root lacks
    files = panel[panel.index('id="compile-files"'):panel.index("</table>", panel.index('id="compile-files"'))]
    broken = files[files.index("<code>src/broken.cu</code>"):].split("</tr>")[0]
    vadd = files[files.index("<code>src/vadd.cu</code>"):].split("</tr>")[0]
    assert ">failed</span>" in broken and '<td class="num sev-error">1</td>' in broken
    assert ">passed</span>" in vadd and re.search(r'<td class="num">[\d.]+\s(KB|bytes)</td>', vadd)
    assert re.search(r'<td class="num">[\d.]+ s</td>', vadd)  # duration
    assert '<span id="compile-cache">0 hits, 2 misses</span>' in panel


def test_compile_diagnostics_link_to_the_original_line(alice_client: Client, compiled_run: Run) -> None:
    page = stage_page(alice_client, compiled_run, "compile")
    panel = panel_of(page)
    group = panel[panel.index("<summary><code>src/broken.cu</code>"):].split("</details>")[0]
    link = reverse("review:file", args=[compiled_run.pk, "src/broken.cu"])
    assert f'<a class="source-link" href="{link}#o9">line 9</a>' in group
    assert "use of undeclared identifier &#x27;cudaFooBar&#x27;" in group
    assert '<span class="sev-error">error</span>' in group
    assert "[-Wunused-value]" in panel  # vadd.cu's warnings keep their flag (clang 21: nodiscard hipError_t)
    assert_no_raw_hostile(page)  # the compiler echoed the hostile comment into the log


def test_review_links_fall_back_to_plain_text_without_the_review_app(settings: Settings) -> None:
    assert review_url(1, "src/a b.cu", 3).endswith("/src/a%20b.cu#o3")
    assert review_url(1, "src/a.cu", 7, side="t").endswith("/src/a.cu#t7")
    settings.ROOT_URLCONF = "migrator.runners.urls"  # an installation without the review app
    assert review_url(1, "src/a.cu", 3) == ""


def test_link_panel_shows_undefined_references_and_missing_libraries(
    alice_client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None]
) -> None:
    only_stages("fetch", "scan", "hipify", "compile", "link")  # every stage before link passes: it can be re-run
    run = run_project(team_user, {"src/main.cu": UNDEFINED_CU})
    link = run.stages.get(name="link")
    assert link.state == "failed"
    panel = panel_of(stage_page(alice_client, run, "link"))
    targets = panel[panel.index('id="link-targets"'):]
    assert "<code>main</code>" in targets and "executable" in targets and ">failed</span>" in targets
    undefined = panel[panel.index('id="link-undefined"'):]
    assert "<code>normalise_rows(float*, int)</code>" in undefined  # demangled
    problem = next(p for p in link.data["problems"] if p["kind"] == "undefined_reference")
    assert problem["object"] and f"<code>{problem['object']}</code>" in undefined
    # Asking for the CUDA library by name: a re-run reports it with its ROCm counterpart.
    Project.objects.filter(pk=run.project_id).update(settings={"link_libraries": ["cublas"]})
    rerun = run_sync(actions.create_rerun(run, user=team_user[0], from_stage="fetch"))
    relinked = rerun.stages.get(name="link")
    assert relinked.state == "failed"
    # Said when it fails: the re-run's own summary and problems (a failure for another reason shows here)
    assert any(p.get("library") == "cublas" for p in relinked.data.get("problems", [])), (relinked.summary, relinked.data)
    panel = panel_of(stage_page(alice_client, rerun, "link"))
    missing = panel[panel.index('id="link-missing"'):]
    assert "<td><code>-lcublas</code></td><td>hipBLAS (<code>-lhipblas</code>)</td><td><code>libhipblas-dev</code></td>" in missing


def test_project_build_panel_shows_steps_and_sandbox_violations(
    alice_client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None]
) -> None:
    only_stages("fetch", "hipify", "compile")
    command = "echo building; touch /usr/migrator-panel-test"
    run = run_project(team_user, {"src/vadd.cu": VADD_CU}, {"build_mode": "project", "build_command": command})
    compile_stage = run.stages.get(name="compile")
    build = compile_stage.data["project_build"]
    assert compile_stage.state == "failed" and build["violations"]
    panel = panel_of(stage_page(alice_client, run, "compile"))
    steps = panel[panel.index('id="project-build-steps"'):]
    assert f"<code>sh -c {command}</code>" in steps
    assert f'<td class="num">{build["steps"][0]["returncode"]}</td>' in steps
    violations = panel[panel.index("Sandbox violations"):]
    assert html.escape(build["violations"][0]) in violations


def test_compile_panel_says_which_build_ran_and_lists_each_build_folder(
    alice_client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None]
) -> None:
    only_stages("fetch", "hipify", "compile")
    files = {"tools/Makefile": "tool: tool.c\n\t$(CC) -o $@ $<\n", "tools/tool.c": "int main(void) { return 0; }\n",
             "tools/kernel.cu": VADD_CU, "docs/Makefile": "html:\n\ttrue\n"}
    run = run_project(team_user, files, {})
    assert run.stages.get(name="compile").state == "passed"
    panel = panel_of(stage_page(alice_client, run, "compile"))
    choice = panel[panel.index('id="compile-build-choice"'):]
    assert choice.startswith('id="compile-build-choice">Built with the project\'s own build: build_mode auto: '
                             "the project&#x27;s own build, make in tools/Makefile, beside the CUDA sources")
    assert "C sources without <code>-std</code>: <code>gnu17</code>" in choice
    units = panel[panel.index('id="project-build-units"'):]
    assert '<td><code>tools</code></td>' in units and "<code>tools/tool</code>" in units
