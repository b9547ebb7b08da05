"""The guarded build-file edits: a HIP path beside the CUDA one, the CUDA path as it was."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from worker.delivery.buildedits import NotUnderstood, edit_cmake, edit_makefile, edit_nested_cmake
from worker.delivery.singlesource import single_source

FIXTURES = Path(__file__).parent.parent / "fixtures" / "delivery"
sys.path.insert(0, str(Path(__file__).parent.parent.parent / "worker" / "delivery" / "added"))
import nvcc_as_hipcc  # noqa: E402  (the script the change adds, imported as the build runs it)

CMAKE = """cmake_minimum_required(VERSION 3.20)
project(tool LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
add_executable(tool main.cu)
target_link_libraries(tool PRIVATE CUDA::cudart)
"""


def test_cmake_moves_cuda_out_of_project_and_enables_it_unless_the_platform_is_amd() -> None:
    edited = edit_cmake(CMAKE)
    lines = edited.splitlines()
    assert lines[1] == "project(tool LANGUAGES CXX)"
    assert 'if(USE_HIP OR GPU_PLATFORM STREQUAL "amd")' in edited
    assert edited.index("enable_language(CUDA)") > edited.index("else()")
    assert "if(NOT MIGRATOR_HIP)  # the AMD build needs no CUDA toolkit\n  find_package(CUDAToolkit REQUIRED)\nendif()" in edited
    assert edited.endswith("target_link_libraries(tool PRIVATE CUDA::cudart)\n")


def test_each_edit_is_idempotent() -> None:
    assert edit_cmake(edit_cmake(CMAKE)) == edit_cmake(CMAKE)
    makefile = (FIXTURES / "make_histogram" / "Makefile").read_text()
    assert edit_makefile(edit_makefile(makefile)) == edit_makefile(makefile)


def test_a_cuda_only_language_list_keeps_cxx() -> None:
    assert edit_cmake("project(k LANGUAGES CUDA)\n").startswith("project(k LANGUAGES CXX)\n")


def test_build_files_without_cuda_are_not_understood() -> None:
    with pytest.raises(NotUnderstood, match="enables no CUDA"):
        edit_cmake("project(plain LANGUAGES CXX)\n")
    with pytest.raises(NotUnderstood, match="never calls nvcc"):
        edit_makefile("all:\n\tg++ -o a a.cpp\n")


def test_the_makefile_body_is_the_else_branch_of_the_amd_test() -> None:
    original = (FIXTURES / "make_histogram" / "Makefile").read_text()
    edited = edit_makefile(original)
    head, _, rest = edited.partition("else\n")
    assert "ifeq ($(GPU_PLATFORM)$(MIGRATOR_HIPIFIED),amd)\ninclude rocm/hip.mk\n" in head
    assert rest.startswith(original) and rest[len(original):].startswith("endif")


def test_single_source_changes_only_build_files_and_adds_rocm(tmp_path: Path) -> None:
    change = single_source(FIXTURES / "cmake_saxpy", None)
    assert sorted(f.path for f in change.files) == ["CMakeLists.txt", "rocm/MigratorHIP.cmake", "rocm/hipify_tree.py"]
    assert change.examined == ("CMakeLists.txt",)
    unchanged = single_source(FIXTURES / "cmake_saxpy", None, only={"src/saxpy.cu"})
    assert "CMakeLists.txt" not in {f.path for f in unchanged.files} and unchanged.examined == ()


def test_single_source_adds_a_rocm_dockerfile_beside_the_cuda_one(tmp_path: Path) -> None:
    tree, translated = tmp_path / "cuda", tmp_path / "hip"
    for root, base in ((tree, "nvidia/cuda:12.4.1-devel-ubuntu22.04"), (translated, "rocm/dev-ubuntu-22.04:6.4")):
        (root / ".github" / "workflows").mkdir(parents=True)
        (root / "Dockerfile").write_text(f"FROM {base}\n")
        (root / ".github" / "workflows" / "ci.yml").write_text(f"image: {base}\n")
        (root / "Makefile").write_text("all:\n\tnvcc -o a a.cu\n")
    change = single_source(tree, translated).by_path()
    assert change["Dockerfile.rocm"].data == b"FROM rocm/dev-ubuntu-22.04:6.4\n"
    assert ".github/workflows/ci-rocm.yml" in change
    assert "Dockerfile" not in change and ".github/workflows/ci.yml" not in change  # the CUDA ones stay


def test_nvcc_options_become_hipcc_options() -> None:
    words = nvcc_as_hipcc.translate(["-O2", "-arch=sm_80", "-gencode", "arch=compute_80,code=sm_80", "-Xcompiler",
                                     "-fPIC,-Wall", "--use_fast_math", "-rdc=true", "-c", "k.cu", "-o", "k.o"])
    assert words == ["-O2", "-fPIC", "-Wall", "-ffast-math", "-fgpu-rdc", "-c", "k.cu", "-o", "k.o"]


def test_a_nested_project_enables_cuda_only_when_the_amd_build_is_off() -> None:
    text = "cmake_minimum_required(VERSION 3.20)\nproject(asyncAPI LANGUAGES C CXX CUDA)\nadd_executable(a a.cu)\n"
    edited = edit_nested_cmake(text)
    assert edited == ("cmake_minimum_required(VERSION 3.20)\nproject(asyncAPI LANGUAGES C CXX)\n"
                      "if(NOT MIGRATOR_HIP)  # GPU_PLATFORM=amd builds it through HIP\n  enable_language(CUDA)\nendif()\n"
                      "add_executable(a a.cu)\n")
    assert edit_nested_cmake(edited) == edited
    assert edit_nested_cmake("add_executable(b b.cu)\n") == "add_executable(b b.cu)\n"


def test_the_cmake_module_carries_the_scanners_cuda_to_rocm_library_table() -> None:
    module = single_source(FIXTURES / "cmake_saxpy", None).by_path()["rocm/MigratorHIP.cmake"].data or b""
    assert b"@MIGRATOR_CUDA_LIBRARIES@" not in module
    assert b"cublas=hipblas=roc::hipblas" in module and b"cufft=hipfft=hip::hipfft" in module
