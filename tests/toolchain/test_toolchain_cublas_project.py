"""A CUDA program using cuBLAS, with a Makefile that says /usr/local/cuda and -lcublas, passes compile and
link with default settings: translated for the default toolchain's HIP (its header folders), compiled and
linked with hipBLAS in the sandbox over the default toolchain root."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from migrator.accounts.models import Team
from migrator.projects.models import Run, Stage
from migrator.projects.workspaces import workspace_for
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.work import open_work

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vecadd_cublas"


def run_fixture(tmp_path: Path, *options: str) -> tuple[Run, dict[str, Stage], str]:
    project = tmp_path / "vecadd"
    shutil.copytree(FIXTURE, project)
    out = io.StringIO()
    try:
        call_command("migrate_repo", str(project), *options, stdout=out)
    except SystemExit:
        pass  # a non-zero exit says the run was not fully validated (no smoke command here); the stages decide
    run = Run.objects.get()
    return run, {stage.name: stage for stage in run.stages.all()}, out.getvalue()


def test_a_cublas_program_builds_with_its_own_makefile_by_default(team_user: tuple[User, Team], tmp_path: Path) -> None:
    run, stages, out = run_fixture(tmp_path)
    assert [stages[n].state for n in ("fetch", "scan", "hipify", "compile", "link")] == ["passed"] * 5, out
    translated = (workspace_for(run.pk).hip / "src" / "vecadd.cu").read_text()
    assert "#include <hipblas/hipblas.h>" in translated and "hipblasSasum" in translated
    compiled = stages["compile"].data
    assert compiled["toolchain"]["name"] == detect_toolchain().name and compiled["mode"] == "project"
    assert compiled["mode_reason"].startswith("build_mode auto: the project's own build, make in Makefile at the top")
    assert compiled["project_build"]["units"][0]["built"] == ["vecadd"]
    assert compiled["project_build"]["system"] == "make" and compiled["project_build"]["run_dir"] == "hip"
    with open_work(workspace_for(run.pk)):  # the build's outputs live on the run's work volume
        assert (workspace_for(run.pk).hip_copy / "vecadd").is_file()  # where the Makefile puts it, in the build copy
    makefile = (workspace_for(run.pk).hip / "Makefile").read_text()
    assert "-lhipblas" in makefile and "/usr/local/cuda" not in makefile


def test_file_by_file_the_build_files_give_the_sources_and_libraries(
    team_user: tuple[User, Team], tmp_path: Path
) -> None:
    run, stages, out = run_fixture(tmp_path, "--project-settings", '{"build_mode": "per_tu"}')
    assert [stages[n].state for n in ("compile", "link")] == ["passed"] * 2, out
    assert stages["compile"].data["build_units"][0]["sources"] == ["src/vecadd.cu"]
    [target] = stages["link"].data["targets"]
    assert target["name"] == "vecadd" and "-lhipblas" in target["command"] and target["status"] == "passed"
