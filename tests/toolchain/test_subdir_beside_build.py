"""source_subdir with the paths its build files name from beside it, built for real in the toolchain root.

Fixtures of our own (tests/fixtures/subdir): a Rodinia-style suite whose ``cuda/pathsum/Makefile`` includes
``../../common/make.config`` (which defines the kernels' ``BLOCK_SIZE``) and reads ``-I../util``, fetched with
``source_subdir: cuda``; a samples tree whose ``samples/intro/CMakeLists.txt`` builds ``add_subdirectory(../common
...)``, fetched with ``source_subdir: samples/intro``. Each runs fetch, scan, hipify, compile and link with default
settings but one offload target, and builds with its own build system.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_tar_gz
from tests.toolchain.test_make_projects import Piped
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.stages import fetch, hipify, link, scan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "subdir"
STAGES = (("fetch", fetch), ("scan", scan), ("hipify", hipify), ("compile", compile_stage), ("link", link))


def run_pipeline(name: str, subdir: str, root: Path) -> Piped:
    files = {p.relative_to(FIXTURES / name).as_posix(): p.read_bytes() for p in (FIXTURES / name).rglob("*")
             if p.is_file()}
    archive = root / f"{name}.tar.gz"
    root.mkdir(parents=True)
    archive.write_bytes(make_tar_gz(files, top=name))
    workspace = Workspace(root / "run")
    piped = Piped(workspace)
    settings = ProjectSettings(offload_archs=("gfx90a",), source_subdir=subdir)
    previous: dict[str, dict[str, Any]] = {}
    for stage_name, stage in STAGES:
        ctx = StageContext(1, 1, workspace, settings, root / "cache",
                           {"kind": "archive", "path": str(archive), "sha256": "fixture", "name": archive.name},
                           previous=dict(previous), log=piped.log.append)
        result = stage.run(ctx)
        piped.results[stage_name] = result
        previous[stage_name] = result.data
        if result.outcome == "failed":
            break
    return piped


@pytest.fixture(scope="module")
def piped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Piped]]:
    base = tmp_path_factory.mktemp("subdir")
    yield {"rodinia": run_pipeline("rodinia_suite", "cuda", base / "rodinia"),
           "samples": run_pipeline("cmake_samples", "samples/intro", base / "samples")}


def states(run: Piped) -> list[str]:
    return [run.results[name].outcome for name, _ in STAGES if name in run.results]


def test_a_rodinia_style_subdirectory_keeps_common_and_builds_with_its_makefile(piped: dict[str, Piped]) -> None:
    run = piped["rodinia"]
    assert states(run) == ["passed"] * 5, run.text[-3000:]
    fetched = run.data("fetch")
    assert fetched["project_dir"] == "cuda"
    assert fetched["kept_beside"] == ["common (cuda/pathsum/Makefile: ../../common/make.config)"]
    assert not (run.workspace.source / "opencl").exists() and not (run.workspace.source / "data").exists()
    assert "  common: cuda/pathsum/Makefile names ../../common/make.config\n" in run.text
    compiled = run.data("compile")
    assert compiled["mode"] == "project" and "make in pathsum/Makefile" in compiled["mode_reason"]
    assert compiled["mode_reason"].endswith("(the project's build in cuda/, the paths kept beside it with it)")
    [unit] = compiled["project_build"]["units"]
    assert unit["folder"] == "cuda/pathsum" and unit["built"] == ["cuda/pathsum/pathsum"]
    assert unit["makefiles"] == ["cuda/pathsum/Makefile", "common/make.config"]
    assert unit["device_targets"] == {"cuda/pathsum/pathsum": ["gfx90a"]}


def test_a_cmake_sample_keeps_the_folder_it_adds_as_a_subdirectory_and_builds_it(piped: dict[str, Piped]) -> None:
    run = piped["samples"]
    assert states(run) == ["passed"] * 5, run.text[-3000:]
    fetched = run.data("fetch")
    assert fetched["project_dir"] == "intro"
    assert fetched["kept_beside"] == ["samples/common (samples/intro/CMakeLists.txt: ../common)"]
    assert sorted(p.name for p in run.workspace.source.iterdir()) == ["common", "intro"]  # advanced/ left out
    compiled = run.data("compile")
    assert compiled["mode"] == "project" and compiled["project_build"]["system"] == "cmake"
    assert compiled["mode_reason"].startswith("build_mode auto: the project's own build (")
    assert " in intro/" in compiled["mode_reason"]
    outputs = {o["target"]: o for o in compiled["cmake_build"]["outputs"]}
    assert outputs["saxpy"]["present"] and outputs["sampleutil"]["present"]
    assert outputs["saxpy"]["offload_archs"] == ["gfx90a"]
