"""Makefile projects of our own, in the styles of real ones, through scan, hipify, compile and link with
default settings but one offload target (the builds, not the default targets, are tested here; one target
keeps the module fast): each builds with its own Makefile in the sandbox over the toolchain root.

Fixtures (tests/fixtures/makebuild): a suite of ``<app>/Makefile`` folders (``CC = nvcc``, ``ARCH = sm_60``,
``-arch=$(ARCH)``, ``-maxrregcount $(maxregisters)``, a shared ``include/``, a kernel ``.cu`` another source
includes); a Rodinia-style ``hotspot/Makefile`` including ``../common/make.config``; a library-only program
whose CUDA calls are all in a ``.cpp``; an old C benchmark (K&R definitions, implicit declarations). Each
fixture's pipeline runs once for the module.
"""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from worker.context import StageContext, StageResult, Workspace
from worker.project_settings import ProjectSettings
from worker.scanning.nvcc_flags import offload_flags
from worker.stages import compile as compile_stage
from worker.stages import hipify, link, scan
from worker.toolchain.work import open_work

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "makebuild"
SETTINGS = ProjectSettings(offload_archs=("gfx90a",))


@dataclass
class Piped:
    workspace: Workspace
    results: dict[str, StageResult] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    def data(self, stage: str) -> dict[str, Any]:
        return self.results[stage].data

    @property
    def text(self) -> str:
        return "".join(self.log)


def run_pipeline(name: str, root: Path) -> Piped:
    workspace = Workspace(root)
    shutil.copytree(FIXTURES / name, workspace.source)
    piped = Piped(workspace)
    previous: dict[str, dict[str, Any]] = {}
    for stage_name, stage in (("scan", scan), ("hipify", hipify), ("compile", compile_stage), ("link", link)):
        ctx = StageContext(1, 1, workspace, SETTINGS, root / "cache", {"kind": "archive"},
                           previous=dict(previous), log=piped.log.append)
        result = stage.run(ctx)
        piped.results[stage_name] = result
        previous[stage_name] = result.data
    return piped


@pytest.fixture(scope="module")
def piped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Piped]]:
    base = tmp_path_factory.mktemp("makebuild")
    yield {name: run_pipeline(name, base / name) for name in ("suite_apps", "rodinia_app", "solver_cpp", "oldc_bench")}


def states(run: Piped) -> list[str]:
    return [run.results[n].outcome for n in ("scan", "hipify", "compile", "link")]


def test_a_suite_builds_each_app_folder_with_its_own_makefile(piped: dict[str, Piped]) -> None:
    run = piped["suite_apps"]
    assert states(run) == ["passed"] * 4, run.text[-3000:]
    compiled = run.data("compile")
    assert compiled["mode"] == "project" and compiled["mode_reason"].startswith(
        "build_mode auto: the project's own build, make in histo/Makefile, vecscale/Makefile")
    units = {u["folder"]: u for u in compiled["project_build"]["units"]}
    assert units["vecscale"]["built"] == ["vecscale/vecscale"] and units["histo"]["built"] == ["histo/histo"]
    assert all(u["ok"] and u["returncode"] == 0 for u in units.values())
    assert units["vecscale"]["device_targets"] == {"vecscale/vecscale": sorted(SETTINGS.offload_archs)}
    assert "make -k -j" in run.text and "make's data base for vecscale: 1 makefile(s) read" in run.text
    makefile = (run.workspace.hip / "vecscale" / "Makefile").read_text()
    assert f"{offload_flags(SETTINGS.offload_archs)} $(NVCCFLAGS)" in makefile and "NVCCFLAGS += \n" in makefile
    assert "-arch ${ARCH}" not in (run.workspace.hip / "histo" / "Makefile").read_text()
    assert run.results["compile"].summary == "Project build (make) succeeded: 2 file(s) built, 2 build folders."


def test_a_rodinia_style_app_builds_with_its_makefile_and_the_shared_config(piped: dict[str, Piped]) -> None:
    run = piped["rodinia_app"]
    assert states(run) == ["passed"] * 4, run.text[-3000:]
    [unit] = run.data("compile")["project_build"]["units"]
    assert unit["folder"] == "hotspot" and unit["built"] == ["hotspot/hotspot"]  # release: writes -o hotspot
    assert unit["makefiles"] == ["hotspot/Makefile", "common/make.config"]
    # the Makefile names no GPU; hipcc got the run's targets
    assert unit["device_targets"] == {"hotspot/hotspot": sorted(SETTINGS.offload_archs)}
    assert run.results["link"].summary == "Linked by the project's own build."


def test_a_library_only_cpp_program_is_a_cuda_project_and_builds(piped: dict[str, Piped]) -> None:
    run = piped["solver_cpp"]
    assert run.data("scan")["project_kind"]["kind"] == "cuda-cpp"
    assert states(run) == ["passed"] * 4, run.text[-3000:]
    [unit] = run.data("compile")["project_build"]["units"]
    assert unit["folder"] == "." and unit["built"] == ["uniform"]
    assert "-lhiprand" in (run.workspace.hip / "Makefile").read_text()


def test_old_c_builds_as_gnu17_with_the_projects_own_makefile(piped: dict[str, Piped]) -> None:
    run = piped["oldc_bench"]
    assert states(run) == ["passed"] * 4, run.text[-3000:]
    build = run.data("compile")["project_build"]
    assert build["c_std"] == "gnu17"
    assert sorted(build["units"][0]["built"]) == ["bench", "bench.o", "kernel.o", "timer.o"]
    assert "implicit declaration of function 'rounds'" in run.text.replace("\u2018", "'").replace("\u2019", "'")


@pytest.mark.parametrize(("name", "program"), [("suite_apps", "vecscale/vecscale"), ("rodinia_app", "hotspot/hotspot")])
def test_the_built_programs_carry_code_for_the_runs_target(piped: dict[str, Piped], name: str, program: str) -> None:
    """-arch=$(ARCH) became the run's target; the Rodinia-style Makefile names none, and hipcc gets it anyway."""
    run = piped[name]
    with open_work(run.workspace):  # the build's outputs live on the run's work volume
        binary = (run.workspace.hip_copy / program).read_bytes()
    assert b"amdgcn-amd-amdhsa--gfx90a" in binary and b"gfx906" not in binary
