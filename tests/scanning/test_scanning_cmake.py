from __future__ import annotations

from collections.abc import Callable

from worker.scanning.model import Finding

Scan = Callable[[dict[str, str]], list[Finding]]

FINDCUDA_PROJECT = """
cmake_minimum_required(VERSION 3.10)
project(saxpy LANGUAGES CXX CUDA)
find_package(CUDA 11.0 REQUIRED)
set(CUDA_NVCC_FLAGS ${CUDA_NVCC_FLAGS} -arch=sm_70 --use_fast_math)
include_directories(/usr/local/cuda/include)
cuda_add_executable(saxpy src/saxpy.cu src/main.cpp)
target_link_libraries(saxpy cublas ${CUDA_LIBRARIES})
# find_package(CUDA) in a comment is ignored
"""

MODERN_PROJECT = """
cmake_minimum_required(VERSION 3.18)
project(fft)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_ARCHITECTURES 70 80)
add_library(fftlib SHARED
    src/fft.cu
    src/plan.cpp)
set_target_properties(fftlib PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
target_compile_options(fftlib PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)
target_link_libraries(fftlib PRIVATE
    CUDA::cudart
    CUDA::cufft)
"""


def _by_rule(findings: list[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.rule_id, []).append(finding)
    return grouped


def test_it_flags_findcuda_and_proposes_find_package_hip(scan: Scan) -> None:
    rules = _by_rule(scan({"CMakeLists.txt": FINDCUDA_PROJECT}))
    [find] = rules["cmake.find-package-cuda"]
    assert (find.line, find.text) == (3, "find_package(CUDA 11.0 REQUIRED)")
    assert find.replacement == "find_package(hip REQUIRED)\nfind_package(hipblas REQUIRED)"  # cublas is linked
    assert find.notebook_slug == "cmake-findcuda" and find.severity == "error" and find.family == "cmake"


def test_it_maps_findcuda_macros_link_names_and_paths(scan: Scan) -> None:
    rules = _by_rule(scan({"CMakeLists.txt": FINDCUDA_PROJECT}))
    assert [f.replacement for f in rules["cmake.findcuda-macro"]] == ["add_executable"]
    assert [(f.text, f.replacement) for f in rules["cmake.cuda-link-library"]] == [("cublas", "hipblas")]
    assert [(f.text, f.replacement) for f in rules["cmake.cuda-path"]] == [("/usr/local/cuda/include", "/opt/rocm/include")]
    variables = {f.text: f.replacement for f in rules["cmake.findcuda-variable"]}
    assert variables == {"CUDA_NVCC_FLAGS": None, "${CUDA_LIBRARIES}": "hip::host"}
    assert rules["cmake.nvidia-arch-flag"][0].text == "-arch=sm_70"
    assert rules["cmake.nvidia-arch-flag"][0].replacement == "--offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100"  # the default targets


def test_it_turns_the_cuda_project_language_into_hip(scan: Scan) -> None:
    rules = _by_rule(scan({"CMakeLists.txt": FINDCUDA_PROJECT}))
    [language] = rules["cmake.project-language-cuda"]
    assert (language.line, language.column, language.replacement) == (2, 28, "HIP")


def test_it_marks_cu_sources_language_hip_after_their_target(scan: Scan) -> None:
    rules = _by_rule(scan({"CMakeLists.txt": MODERN_PROJECT}))
    [cu] = rules["cmake.cu-source-language"]
    assert (cu.line, cu.text, cu.fixable) == (9, "", True)  # after the last line of add_library(...)
    assert cu.replacement == "\nset_source_files_properties(src/fft.cu PROPERTIES LANGUAGE HIP)"


def test_it_accepts_cu_sources_already_marked_hip(scan: Scan) -> None:
    marked = MODERN_PROJECT + "set_source_files_properties(src/fft.cu PROPERTIES LANGUAGE HIP)\n"
    assert "cmake.cu-source-language" not in _by_rule(scan({"CMakeLists.txt": marked}))


def test_it_reports_modern_cuda_language_settings(scan: Scan) -> None:
    rules = _by_rule(scan({"CMakeLists.txt": MODERN_PROJECT}))
    assert rules["cmake.enable-language-cuda"][0].replacement == "enable_language(HIP)"
    assert rules["cmake.find-package-cudatoolkit"][0].replacement == "find_package(hip REQUIRED)\nfind_package(hipfft REQUIRED)"
    variables = {f.text: f.replacement for f in rules["cmake.cmake-cuda-variable"]}
    assert variables == {"CMAKE_CUDA_STANDARD": "CMAKE_HIP_STANDARD",
                         "set(CMAKE_CUDA_ARCHITECTURES 70 80)": "set(CMAKE_HIP_ARCHITECTURES gfx90a;gfx942;gfx1100)"}
    targets = {f.text: f.replacement for f in rules["cmake.cuda-imported-target"]}
    assert targets == {"CUDA::cudart": "hip::host", "CUDA::cufft": "hip::hipfft"}
    [separable] = rules["cmake.cuda-property"]
    assert separable.text == "set_target_properties(fftlib PROPERTIES CUDA_SEPARABLE_COMPILATION ON)"
    assert separable.replacement is not None and separable.replacement.startswith("# ")
    [genex] = rules["cmake.cuda-generator-expression"]
    assert (genex.text, genex.replacement) == ("$<COMPILE_LANGUAGE:CUDA", "$<COMPILE_LANGUAGE:HIP")
    assert rules["cmake.nvcc-only-flag"][0].replacement == ""


def test_it_ignores_cmake_without_cuda(scan: Scan) -> None:
    plain = "project(app CXX)\nadd_executable(app main.cpp)\ntarget_link_libraries(app pthread)\n"
    assert scan({"CMakeLists.txt": plain, "cmake/Deps.cmake": "find_package(Threads REQUIRED)\n"}) == []
