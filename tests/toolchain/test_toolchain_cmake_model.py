"""CMake projects of our own, each in the style of a real one, through hipify, compile and link with default
settings but one offload target (faster; the default targets are not what is tested here) in the sandbox
over the default toolchain root: the build runs from CMake's own model (File API),
every CUDA source however the project lists it is built as HIP with the run's offload targets, C without a
-std gets gnu17, and a project whose only target is skipped is "nothing built"."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from worker.context import StageContext, StageResult, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.stages import hipify, link

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cmake_model"
NAMES = ("aux_kernels", "glob_library", "subdir_genex", "optional_vulkan")
SETTINGS = ProjectSettings(offload_archs=("gfx90a",))
TARGETS = sorted(SETTINGS.offload_archs)  # the GPU code each output holds, as read back from it


@dataclass
class Outcome:
    compile: StageResult
    link: StageResult
    log: str

    @property
    def cmake(self) -> dict[str, Any]:
        data: dict[str, Any] = self.compile.data["cmake_build"]
        return data


def run_stages(name: str, root: Path, settings: ProjectSettings) -> Outcome:
    workspace = Workspace(root)
    shutil.copytree(FIXTURES / name, workspace.source)
    logs: list[str] = []
    ctx = StageContext(run_id=1, project_id=1, workspace=workspace, settings=settings, cache_dir=root / "cache",
                       source_spec={"kind": "archive"}, log=logs.append)
    ctx.previous["hipify"] = hipify.run(ctx).data
    compiled = compile_stage.run(ctx)
    ctx.previous["compile"] = compiled.data
    return Outcome(compiled, link.run(ctx), "".join(logs))


# The converted aux_kernels without the rule that keeps its .cu files: the model must catch it.
WITHOUT_AUX_RULE = ProjectSettings(offload_archs=SETTINGS.offload_archs,
                                   disabled_fix_rules=("cmake.aux-source-directory-cuda",))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    """Every run of the module at once: a configure is mostly one process waiting on the next."""
    runs = {name: (name, SETTINGS) for name in NAMES} | {"no_aux_rule": ("aux_kernels", WITHOUT_AUX_RULE)}
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        futures = {key: pool.submit(run_stages, name, tmp_path_factory.mktemp(key), settings)
                   for key, (name, settings) in runs.items()}
        yield {key: future.result() for key, future in futures.items()}


def outputs(outcome: Outcome) -> dict[str, list[str]]:
    return {o["path"]: o["offload_archs"] for o in outcome.cmake["outputs"] if o["present"]}


@pytest.mark.parametrize("name", NAMES[:3])
def test_each_builds_with_its_own_cmake_by_default(built: dict[str, Outcome], name: str) -> None:
    outcome = built[name]
    assert (outcome.compile.outcome, outcome.link.outcome) == ("passed", "passed"), outcome.log[-3000:]
    assert outcome.compile.data["mode_reason"].startswith("build_mode auto: the project's own build")
    assert "$ cmake -S /workspace/hip -B /workspace/build" in outcome.log
    assert f"-DCMAKE_HIP_ARCHITECTURES={';'.join(SETTINGS.offload_archs)} " in outcome.log
    assert "$ cmake --build /workspace/build -j" in outcome.log and outcome.log.count(" -- -k\n") == 1  # keep going
    assert outcome.cmake["problems"] == [] and outcome.cmake["generator"] == "Unix Makefiles"


def test_aux_source_directory_keeps_its_cuda_sources(built: dict[str, Outcome]) -> None:
    outcome = built["aux_kernels"]
    [target] = outcome.cmake["targets"]
    assert target["name"] == "aux_kernels" and target["languages"] == ["CXX", "HIP"] and target["sources"] == 2
    assert "Building HIP object CMakeFiles/aux_kernels.dir/src/runner.cu.o" in outcome.log
    assert outputs(outcome) == {"aux_kernels": TARGETS}


def test_glob_recurse_library_and_old_c_get_gnu17(built: dict[str, Outcome]) -> None:
    """The device code is checked in the outputs of targets with HIP sources (the program here is C++ only)."""
    outcome = built["glob_library"]
    assert outputs(outcome) == {"libimagekernels.a": TARGETS, "liblegacytimer.a": [], "libchecksum.a": [],
                                "blurdemo": []}
    # K&R C builds with gnu17; a C standard the project names itself still wins
    assert outcome.cmake["c_std"] == ["gnu11", "gnu17"] and outcome.cmake["c_std_default"] == "gnu17"
    assert "C compiled with -std=gnu11, gnu17" in outcome.log


def test_sources_from_a_subdirectory_and_a_generator_expression_build_as_hip(built: dict[str, Outcome]) -> None:
    outcome = built["subdir_genex"]
    for source in ("main.cu", "filters/fast_sum.cu"):
        assert f"Building HIP object CMakeFiles/filterdemo.dir/{source}.o" in outcome.log
    assert outputs(outcome) == {"filterdemo": TARGETS}


def test_a_project_whose_only_target_is_skipped_is_nothing_built(built: dict[str, Outcome]) -> None:
    outcome = built["optional_vulkan"]
    assert outcome.compile.outcome == "failed" and outcome.link.outcome == "failed"
    assert outcome.compile.summary.startswith("Nothing built: CMake configured no target that builds code: "
                                              "Could NOT find Vulkan")
    assert "Vulkan SDK not found: particles_vk will not be built" in outcome.cmake["nothing_built"]
    assert outcome.link.summary.startswith("Nothing linked: the project's build built nothing")


def test_a_cuda_source_the_converted_build_drops_fails_the_configuration(built: dict[str, Outcome]) -> None:
    outcome = built["no_aux_rule"]
    assert outcome.compile.outcome == "failed"
    problem = ("src/runner.cu (target aux_kernels) is CUDA but the converted build does not compile it "
               "[cmake.aux-source-directory-cuda]")
    assert outcome.cmake["problems"] == [problem]
    assert outcome.compile.summary == f"Project build failed: build configuration: {problem}"
    assert "$ cmake --build" not in outcome.log  # no build of a configuration known to be wrong


def test_the_compile_page_lists_what_was_built_and_for_which_gpus(built: dict[str, Outcome]) -> None:
    from django.template.loader import render_to_string

    page = render_to_string("projects/stages/_compile.html", {"data": built["glob_library"].compile.data, "panel": {}})
    table = page[page.index('id="cmake-outputs"'):page.index("</table>", page.index('id="cmake-outputs"'))]
    assert "<td>imagekernels <span class=\"muted\">static_library</span></td><td><code>libimagekernels.a</code></td>" in table
    assert f"<td>{', '.join(TARGETS)}</td>" in table and "none (host code only)" in table
    assert "C sources: <code>-std=gnu11, gnu17</code>" in page
    nothing = render_to_string("projects/stages/_compile.html", {"data": built["optional_vulkan"].compile.data, "panel": {}})
    assert '<p class="sev-error" id="cmake-nothing-built">Nothing built: CMake configured no target' in nothing
