"""Compile and link stages on a small translated project with the real hipcc.

One module-scoped compile (4 TUs) is shared by every test here; later tests
reuse its object cache, so the whole file costs about three hipcc runs.
"""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from worker.context import StageContext, StageResult, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.stages import link as link_stage
from worker.toolchain.compile import compile_tree
from worker.toolchain.link import link_objects
from worker.toolchain.work import open_work

ORIGINAL_HEADER = """#pragma once
#include <cuda_runtime.h>
__global__ void add(float* out, const float* in, int n);
void launch_add(float* out, const float* in, int n);
"""
TRANSLATED_HEADER = ORIGINAL_HEADER.replace("cuda_runtime.h", "hip/hip_runtime.h")
ORIGINAL_VEC = """#include "vec.cuh"
__global__ void add(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += in[i];
}
void launch_add(float* out, const float* in, int n) {
  int spare;
  add<<<(n + 255) / 256, 256>>>(out, in, n);
}
"""
TRANSLATED_VEC = ORIGINAL_VEC.replace(
    "add<<<(n + 255) / 256, 256>>>(out, in, n);",
    "hipLaunchKernelGGL(add, dim3((n + 255) / 256), dim3(256), 0, 0, out, in, n);",
)
ORIGINAL_MAIN = """#include "vec.cuh"
int main() {
  float* d = nullptr;
  cudaMalloc(&d, 1024);
  launch_add(d, d, 256);
  return 0;
}
"""
TRANSLATED_MAIN = ORIGINAL_MAIN.replace("cudaMalloc(&d", "(void)hipMalloc(&d")
ORIGINAL_BROKEN = """#include <cuda_runtime.h>
int scale(int x) {
  return x * missing_factor;
}
"""
# the translator inserted a line, so the error moves from line 3 to line 4
TRANSLATED_BROKEN = """#include <hip/hip_runtime.h>
#include "hip_compat.h"
int scale(int x) {
  return x * missing_factor;
}
"""
LEFTOVER = """#include <cuda_runtime.h>
__global__ void noop() {}
"""


@dataclass
class Built:
    workspace: Workspace
    cache_dir: Path
    settings: ProjectSettings
    result: StageResult
    logs: list[str]


def write_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


def make_context(workspace: Workspace, cache_dir: Path, settings: ProjectSettings, logs: list[str],
                 previous: dict[str, dict[str, Any]] | None = None) -> StageContext:
    return StageContext(run_id=1, project_id=1, workspace=workspace, settings=settings, cache_dir=cache_dir,
                        source_spec={}, previous=previous or {}, log=logs.append)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    root = tmp_path_factory.mktemp("run1")
    workspace = Workspace(root)
    workspace.ensure()
    write_tree(workspace.source, {
        "include/vec.cuh": ORIGINAL_HEADER, "src/vec.cu": ORIGINAL_VEC, "app/main.cu": ORIGINAL_MAIN,
        "src/broken.cu": ORIGINAL_BROKEN, "src/leftover.cu": LEFTOVER,
        "CMakeLists.txt": "set(CMAKE_CUDA_STANDARD 14)\n",
    })
    write_tree(workspace.hip, {
        "include/vec.cuh": TRANSLATED_HEADER, "src/vec.hip": TRANSLATED_VEC, "app/main.cu": TRANSLATED_MAIN,
        "src/broken.hip": TRANSLATED_BROKEN, "src/hip_compat.h": "#pragma once\n", "src/leftover.cu": LEFTOVER,
        "CMakeLists.txt": "set(CMAKE_CUDA_STANDARD 14)\n",
    })
    settings = ProjectSettings(extra_flags=("-Wall",))
    logs: list[str] = []
    cache_dir = tmp_path_factory.mktemp("cache")
    previous = {"hipify": {"renames": {"src/broken.hip": "src/broken.cu"}}}
    # The run's work volume stays open for the module, so the tests that link the objects see them.
    with open_work(workspace):
        result = compile_stage.run(make_context(workspace, cache_dir, settings, logs, previous))
        yield Built(workspace, cache_dir, settings, result, logs)


def files_by_path(result: StageResult) -> dict[str, dict[str, Any]]:
    return {entry["path"]: entry for entry in result.data["files"]}


def test_it_fails_the_stage_when_any_translation_unit_fails(built: Built) -> None:
    statuses = {path: entry["status"] for path, entry in files_by_path(built.result).items()}
    assert built.result.outcome == "failed"
    assert statuses == {"app/main.cu": "passed", "src/vec.hip": "passed",
                        "src/broken.hip": "failed", "src/leftover.cu": "failed"}
    assert files_by_path(built.result)["src/vec.hip"]["object_size"] > 0


def test_it_uses_the_dialect_named_by_the_cuda_build_files(built: Built) -> None:
    assert built.result.data["cxx_std"] == "c++14"
    assert built.result.data["include_dirs"] == ["include"]


def test_it_maps_an_error_back_to_the_original_line_through_a_rename(built: Built) -> None:
    error = next(d for d in built.result.data["diagnostics"] if d["file"] == "src/broken.hip")
    assert (error["line"], error["severity"]) == (4, "error")
    assert "missing_factor" in error["message"]
    assert (error["original_file"], error["original_line"]) == ("src/broken.cu", 3)
    assert files_by_path(built.result)["src/broken.hip"]["original_path"] == "src/broken.cu"


def test_it_reports_a_cuda_header_left_behind_as_fatal(built: Built) -> None:
    fatal = [d for d in built.result.data["diagnostics"] if d["severity"] == "fatal"]
    assert [(d["file"], d["line"], d["message"]) for d in fatal] == [
        ("src/leftover.cu", 1, "'cuda_runtime.h' file not found")]


def test_it_reports_warnings_once_with_their_flag_and_original_line(built: Built) -> None:
    warnings = [d for d in built.result.data["diagnostics"] if d["flag"] == "-Wunused-variable"]
    assert len(warnings) == 1  # hipcc prints it for host and gfx90a
    assert (warnings[0]["file"], warnings[0]["line"], warnings[0]["original_line"]) == ("src/vec.hip", 7, 7)
    assert warnings[0]["original_file"] == "src/vec.cu"
    assert built.result.data["summary"]["src/vec.hip"] == {"errors": 0, "warnings": 1}


def test_it_streams_a_line_per_file_and_keeps_the_full_payload(built: Built) -> None:
    log = "".join(built.logs)
    assert "[4/4]" in log and "src/leftover.cu: failed" in log
    assert (built.workspace.artifacts / "compile.json").is_file()
    assert built.result.data["cache"] == {"hits": 0, "misses": 4}


def good_tree_workspace(built: Built, root: Path) -> Workspace:
    """A second run's workspace holding only the good files (same relative paths)."""
    workspace = Workspace(root)
    workspace.ensure()
    shutil.copytree(built.workspace.source, workspace.source)
    shutil.copytree(built.workspace.hip, workspace.hip)
    for relative in ("src/broken.hip", "src/leftover.cu", "src/hip_compat.h"):
        (workspace.hip / relative).unlink()
    return workspace


def test_an_unchanged_rerun_compiles_nothing_and_a_changed_file_compiles_once(built: Built, tmp_path: Path) -> None:
    workspace = good_tree_workspace(built, tmp_path / "run2")
    first = compile_tree(workspace.hip, workspace.build, built.settings, built.cache_dir)
    assert first.ok and (first.cache_hits, first.cache_misses) == (2, 0)
    main = workspace.hip / "app/main.cu"
    main.write_text(main.read_text().replace("256);", "128);"))
    second = compile_tree(workspace.hip, workspace.build, built.settings, built.cache_dir)
    assert second.ok and (second.cache_hits, second.cache_misses) == (1, 1)
    assert [f.path for f in second.files if not f.cached] == ["app/main.cu"]


def test_a_changed_header_recompiles_every_file_including_it(built: Built, tmp_path: Path) -> None:
    workspace = good_tree_workspace(built, tmp_path / "run3")
    # both files include the header, so both must miss; a 1 s limit kills those compiles early (keys ignore it)
    settings = replace(built.settings, compile_timeout_s=1)
    header = workspace.hip / "include/vec.cuh"
    header.write_text(header.read_text() + "// changed\n")
    report = compile_tree(workspace.hip, workspace.build, settings, built.cache_dir)
    assert (report.cache_hits, report.cache_misses) == (0, 2)


def test_the_link_stage_links_an_executable_from_the_good_objects(built: Built, tmp_path: Path) -> None:
    workspace = good_tree_workspace(built, tmp_path / "run4")
    logs: list[str] = []
    compiled = compile_stage.run(make_context(workspace, built.cache_dir, built.settings, logs))
    assert compiled.outcome == "passed" and compiled.data["cache"] == {"hits": 2, "misses": 0}
    linked = link_stage.run(make_context(workspace, built.cache_dir, built.settings, logs, {"compile": compiled.data}))
    assert linked.outcome == "passed", linked.data
    assert [(t["name"], t["kind"], t["units"]) for t in linked.data["targets"]] == [
        ("main", "executable", ["app/main.cu", "src/vec.hip"])]
    with open_work(workspace):  # the link's output lives on the run's work volume
        assert (workspace.build / "bin" / "main").is_file()


def good_objects(built: Built) -> dict[str, Path]:
    files = files_by_path(built.result)
    return {path: Path(files[path]["object_path"]) for path in ("app/main.cu", "src/vec.hip")}


def test_it_reports_undefined_references_demangled_with_the_object_needing_them(built: Built) -> None:
    only_main = {"app/main.cu": good_objects(built)["app/main.cu"]}
    report = link_objects(only_main, built.workspace.hip, built.workspace.build, built.settings)
    assert not report.ok
    [problem] = report.problems
    assert problem.kind == "undefined_reference"
    assert problem.symbol == "launch_add(float*, float const*, int)"
    assert (problem.object, problem.function) == ("app/main.cu", "main")


def test_it_maps_a_missing_cublas_to_hipblas_and_its_package(built: Built) -> None:
    settings = replace(built.settings, link_libraries=("cublas",))
    report = link_objects(good_objects(built), built.workspace.hip, built.workspace.build, settings)
    assert not report.ok
    missing = [p for p in report.problems if p.kind == "missing_library"]
    assert [(p.library, p.replacement, p.replacement_link_name, p.package) for p in missing] == [
        ("cublas", "hipBLAS", "hipblas", "libhipblas-dev")]


def test_it_builds_a_shared_library_when_asked(built: Built) -> None:
    settings = replace(built.settings, link_target="shared")
    objects = {"src/vec.hip": good_objects(built)["src/vec.hip"]}
    report = link_objects(objects, built.workspace.hip, built.workspace.build, settings, name="vec")
    assert report.ok, report.problems
    assert Path(report.targets[0].output_path).name == "libvec.so"


def test_the_link_stage_refuses_when_compile_failed(built: Built) -> None:
    linked = link_stage.run(make_context(built.workspace, built.cache_dir, built.settings, [],
                                         {"compile": built.result.data}))
    assert linked.outcome == "failed"
    assert "failed to compile" in linked.summary


def test_the_compile_stage_fails_clearly_without_a_translated_tree(tmp_path: Path) -> None:
    result = compile_stage.run(make_context(Workspace(tmp_path), tmp_path / "cache", ProjectSettings(), []))
    assert result.outcome == "failed"
    assert "hipify" in result.summary
