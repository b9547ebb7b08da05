"""The link stage of an extension project on a runner with a ROCm PyTorch (a fake one here, no GPU): the
extension's own build, as its project builds it, really run in the sandbox over the runner's root.

A CMake project whose Torch bindings are optional (``find_package(Torch QUIET)``) builds its HIP kernels
library without any torch library, so it passes on the fake runner for real: a shared object built by
CMake's HIP language for the run's target. Which command builds which kind of extension is checked without a build."""
from __future__ import annotations

from pathlib import Path

import pytest

from worker.context import StageContext, Workspace
from worker.payloads import CompileData, ExtensionBuildData
from worker.project_settings import ProjectSettings
from worker.runner.torch_probe import FAKE_TORCH_ENV, TorchProbe, probe_torch
from worker.stages import link
from worker.stages.extension_link import build_command

CMAKE = """cmake_minimum_required(VERSION 3.24)
project(optkernels LANGUAGES CXX HIP)
find_package(Torch QUIET)
add_library(optkernels SHARED src/scale.hip)
if(Torch_FOUND)
  target_sources(optkernels PRIVATE src/torch_ops.cpp)
  target_link_libraries(optkernels PRIVATE ${TORCH_LIBRARIES})
endif()
"""
SCALE_HIP = """#include <hip/hip_runtime.h>

__global__ void scale_kernel(float* x, float s, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

extern "C" hipError_t optkernels_scale(float* x, float s, int n, hipStream_t stream) {
  scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, s, n);
  return hipGetLastError();
}
"""
ROCM_TORCH = TorchProbe("rocm-pytorch-image", "2.9.1+rocm7.2.0", "7.2.26015", "3.12.3", True, True,
                        "/opt/venv/lib/python3.12/site-packages/torch/share/cmake")


def _extension(name: str, how: str, directory: str, declared_in: str) -> ExtensionBuildData:
    return ExtensionBuildData(name=name, how=how, declared_in=declared_in, directory=directory, state="passed",
                              sources=[], translated=[], errors=0, checked="", link="", notes=[])


def test_each_kind_of_extension_is_built_as_its_project_builds_it(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/setup.py").write_text("")
    archs = ("gfx90a", "gfx942")
    package = _extension("pkg._C", "setup.py", "pkg", "pkg/setup.py:9")
    assert build_command(package, archs, tmp_path, ROCM_TORCH) == (
        "cd /workspace/hip/pkg && PYTORCH_ROCM_ARCH='gfx90a;gfx942' python3 -m pip install --no-build-isolation "
        "--no-deps --target /workspace/site -v .")
    no_pip = TorchProbe("r", "2.9.1", "fake", pip=False, fake=True)
    assert build_command(package, archs, tmp_path, no_pip) == (
        "cd /workspace/hip/pkg && PYTORCH_ROCM_ARCH='gfx90a;gfx942' python3 setup.py build_ext --inplace")
    jit = _extension("ops", "load", "ops", "ops/run.py:4")
    assert build_command(jit, archs, tmp_path, ROCM_TORCH) == (
        "cd /workspace/hip && PYTORCH_ROCM_ARCH='gfx90a;gfx942' python3 ops/run.py")
    cmake = _extension("kern", "cmake", ".", "CMakeLists.txt")
    assert build_command(cmake, archs, tmp_path, ROCM_TORCH, "/usr/bin/clang++") == (
        "cmake -S /workspace/hip -B /workspace/build/kern "
        "-DCMAKE_PREFIX_PATH=/opt/venv/lib/python3.12/site-packages/torch/share/cmake "
        "-DCMAKE_HIP_COMPILER=/usr/bin/clang++ -DCMAKE_HIP_PLATFORM=amd -DCMAKE_HIP_ARCHITECTURES='gfx90a;gfx942' "
        "&& cmake --build /workspace/build/kern")


def test_a_build_that_needs_no_torch_library_passes_on_the_fake_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAKE_TORCH_ENV, "2.9.1+rocm7.2")
    probe_torch.cache_clear()
    workspace = Workspace(tmp_path / "run")
    workspace.ensure()
    for tree in (workspace.source, workspace.hip):  # already HIP: the translated tree is the source here
        (tree / "src").mkdir(parents=True, exist_ok=True)
        (tree / "CMakeLists.txt").write_text(CMAKE)
        (tree / "src/scale.hip").write_text(SCALE_HIP)
    compiled = CompileData(mode="extension", extensions=[_extension("optkernels", "cmake", ".", "CMakeLists.txt")])
    logs: list[str] = []
    ctx = StageContext(run_id=1, project_id=1, workspace=workspace,
                       settings=ProjectSettings.from_dict({"offload_archs": ["gfx90a"]}), cache_dir=tmp_path / "cache",
                       source_spec={"kind": "archive"}, previous={"compile": dict(compiled)}, log=logs.append)
    try:
        result = link.run(ctx)
    finally:
        probe_torch.cache_clear()
    assert result.outcome == "passed", "".join(logs)[-3000:]
    build = result.data["runner_build"]
    assert build["outputs"] == ["/workspace/build/optkernels/liboptkernels.so"]
    (command,) = build["commands"]
    assert command["exit_code"] == 0 and "-DCMAKE_HIP_ARCHITECTURES=gfx90a" in command["command"]
    assert result.data["fake_torch"] and result.summary.startswith("[fake PyTorch] Built optkernels with PyTorch "
                                                                   "2.9.1+rocm7.2 (fake)")
    print(f"\nfake ROCm PyTorch runner: the runner-side CMake build of optkernels took {build['duration_s']:.2f} s "
          f"(configure and build {command['duration_s']:.2f} s)")
    assert not (workspace.hip / "build").exists()  # built in the work volume's copy, never in the translated tree
