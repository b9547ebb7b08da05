"""Whole runs whose compile fails in files translation left alone: the CUDA reference build (real nvcc, in
the sandbox) decides between the port and the project's code, for the run that made it and for its
re-runs, on the run page's causes and the compile page."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.causes import run_causes, run_reference_build
from migrator.projects.models import ReferenceRun, Run
from tests.conftest import VADD_CU, pipeline_run, run_reference_here
from tests.markers import requires_nvcc
from tests.outcomes.real_toolchain import require_root

pytestmark = [pytest.mark.django_db, requires_nvcc]

# g++ (nvcc's host compiler) only warns on a narrowing conversion in braces; clang rejects it.
TABLE_CPP = """#include <cmath>

struct Cell {
  int row;
  int col;
};

Cell cell_at(double x, double y) {
  Cell c{std::floor(y), std::floor(x)};
  return c;
}
"""
# A call of a function the project never declares fails in both compilers, at the same line.
LOADER_CPP = """#include <cstdio>

int load(const char* path) {
  FILE* f = std::fopen(path, "r");
  return read_header(f);
}
"""
FILES = {"src/vadd.cu": VADD_CU, "src/table.cpp": TABLE_CPP, "src/loader.cpp": LOADER_CPP}


@pytest.fixture
def failed_run(team_user: tuple[User, Team], monkeypatch: pytest.MonkeyPatch, settings: Settings) -> Run:
    require_root()
    settings.MIGRATOR_LOCAL_CUDA_REFERENCE = True  # the installation's default; off in the other tests
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "sm_90")  # the reference builds for a GPU it cannot run on here
    project = actions.create_project(team_user[1], "tables", user=None)
    actions.update_settings(project, {"smoke_command": "./vadd"})
    run = pipeline_run(project, FILES)
    assert run.stages.get(name="compile").state == "failed"
    return run


def _by_file(run: Run) -> dict[str, tuple[str, str, str]]:
    return {file: (g.kind, g.key, g.reason) for g in run_causes(run).groups for file in g.files}


def test_a_first_run_whose_compile_fails_builds_its_cuda_reference_and_its_causes_use_it(
        failed_run: Run, team_user: tuple[User, Team], client: Client) -> None:
    """The run of the command line had nvcc at hand: after the failed compile it built the reference itself."""
    reference = ReferenceRun.objects.get(run=failed_run)
    assert reference.state == "failed" and reference.data["build_only"] and "(local nvcc)" in reference.worker
    assert reference.summary == "CUDA reference build failed: 1 translation unit(s) failed to compile: src/loader.cpp"
    failed_run.refresh_from_db()
    assert failed_run.state == "failed"  # the reference changes the causes, never the verdict
    causes = _by_file(failed_run)
    assert causes["src/table.cpp"][:2] == ("translation", "cuda-build-passes")
    assert causes["src/loader.cpp"][:2] == ("project_code", "also-fails-cuda")
    client.force_login(team_user[0])
    page = client.get(f"/runs/{failed_run.pk}/").content.decode()
    assert 'id="reference-run"' in page and "CUDA reference build failed" in page
    report = client.get(f"/runs/{failed_run.pk}/report.json").json()
    assert report["causes"]["groups"][0]["kind"] == "translation"
    assert report["reference"]["state"] == "failed"


@pytest.mark.django_db
def test_without_a_cuda_side_the_causes_stay_and_the_page_says_the_reference_did_not_run(
        team_user: tuple[User, Team], client: Client, settings: Settings) -> None:
    require_root()
    settings.MIGRATOR_LOCAL_CUDA_REFERENCE = False  # as in the test settings; said here, as the test is about it
    project = actions.create_project(team_user[1], "tables", user=None)
    run = pipeline_run(project, FILES)
    reference = ReferenceRun.objects.get(run=run)
    assert reference.state == "skipped" and reference.worker == ""
    causes = _by_file(run)  # no evidence: both are project code, the last resort
    assert causes["src/table.cpp"][:2] == causes["src/loader.cpp"][:2] == ("project_code", "cxx-error")
    client.force_login(team_user[0])
    page = client.get(f"/runs/{run.pk}/").content.decode()
    section = page[page.index('id="reference-run"'):page.index("</section>", page.index('id="reference-run"'))]
    assert "Not run" in section and "no CUDA runner online" in section


def test_the_cuda_reference_separates_the_port_from_the_project_for_the_run_and_its_reruns(
        failed_run: Run, team_user: tuple[User, Team], client: Client) -> None:
    reference = run_reference_here(failed_run)
    compiles = {r["target"]: r["ok"] for r in reference["build"]["compiles"]}  # type: ignore[index]
    assert compiles == {"src/loader.cpp": False, "src/table.cpp": True, "src/vadd.cu": True}  # real nvcc
    causes = _by_file(failed_run)
    assert causes["src/table.cpp"][:2] == ("translation", "cuda-build-passes")
    assert "the CUDA build passes (this run)" in causes["src/table.cpp"][2]
    assert causes["src/loader.cpp"][:2] == ("project_code", "also-fails-cuda")
    assert "also fail in the CUDA reference build (this run)" in causes["src/loader.cpp"][2]
    assert run_causes(failed_run).groups[0].kind == "translation"  # project code is the headline no longer

    rerun = run_sync(actions.create_rerun(failed_run, user=None, from_stage="compile"))
    causes = _by_file(rerun)
    assert causes["src/table.cpp"][:2] == ("translation", "cuda-build-passes")
    assert f"the CUDA build passes (run #{failed_run.number})" in causes["src/table.cpp"][2]
    assert causes["src/loader.cpp"][:2] == ("project_code", "also-fails-cuda")
    client.force_login(team_user[0])
    page = client.get(f"/runs/{rerun.pk}/?stage=compile").content.decode()
    groups = page[page.index('id="compile-causes"'):page.index("</section>", page.index('id="compile-causes"'))]
    assert groups.index("the CUDA build passes") < groups.index("also fail in the CUDA reference build")
    assert "src/table.cpp" in groups and "src/loader.cpp" in groups


def test_a_parents_reference_made_with_other_build_settings_is_no_evidence(failed_run: Run) -> None:
    run_reference_here(failed_run)
    same = actions.create_rerun(failed_run, user=None, from_stage="compile")
    found = run_reference_build(same)
    assert found is not None and found.origin == f"run #{failed_run.number}"
    actions.update_settings(failed_run.project, {"smoke_command": "./vadd", "defines": ["TABLE_ROWS=8"]})
    other = actions.create_rerun(failed_run, user=None, from_stage="compile")
    assert other.settings_used.get("defines") == ["TABLE_ROWS=8"]
    assert run_reference_build(other) is None  # nvcc compiled the parent's tree without that define
