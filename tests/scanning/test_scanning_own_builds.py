"""Each fixture in the style of a public CUDA project goes through the hipify stage with default
settings and is then configured and built for real, with its own build system, in the sandbox."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.build_bench import RECIPES, FixtureBuild, run_fixture
from worker.project_settings import ProjectSettings
from worker.scanning.findings import scan_build_files
from worker.toolchain.roots import default_root

needs_root = pytest.mark.skipif(default_root() is None, reason="no toolchain root (./dev builds it)")


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[FixtureBuild, Path]]:
    done: dict[str, tuple[FixtureBuild, Path]] = {}
    for name in sorted(RECIPES):
        workdir = tmp_path_factory.mktemp(name)
        done[name] = (run_fixture(name, workdir), workdir / "hip")
    return done


@needs_root
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_the_fixture_builds_with_its_own_build_system_after_the_pipeline(
    builds: dict[str, tuple[FixtureBuild, Path]], name: str
) -> None:
    outcome, _ = builds[name]
    assert outcome.built, outcome.log[-3000:]


@needs_root
def test_fixes_are_idempotent_and_each_names_its_rule(builds: dict[str, tuple[FixtureBuild, Path]]) -> None:
    for name, (outcome, hip) in builds.items():
        assert all(str(fix["rule_id"]).count(".") == 1 and fix["before"] != fix["after"] for fix in outcome.fixes)
        assert [f for f in scan_build_files(hip, ()) if f.fixable] == [], name


@needs_root
def test_cmake_goes_to_the_hip_language_with_rocm_packages(builds: dict[str, tuple[FixtureBuild, Path]]) -> None:
    _, hip = builds["cmake_samples"]
    top = (hip / "CMakeLists.txt").read_text()
    targets = ";".join(ProjectSettings().offload_archs)  # the hipify stage's default settings
    assert "project(gpu_samples LANGUAGES C CXX HIP)" in top and f"set(CMAKE_HIP_ARCHITECTURES {targets})" in top
    assert "find_package(hip REQUIRED)\nfind_package(hipfft REQUIRED)" in top  # hipfft is linked below
    sample = (hip / "samples" / "vectorScale" / "CMakeLists.txt").read_text()
    assert "set_source_files_properties(vectorScale.cu scale_kernels.cu PROPERTIES LANGUAGE HIP)" in sample
    assert "set_source_files_properties(reduce.cu PROPERTIES LANGUAGE HIP)" in sample  # from target_sources
    assert "$<$<COMPILE_LANGUAGE:HIP>: -Wall>" in sample and "hip_std_17" in sample
    fft = (hip / "samples" / "fftFilter" / "CMakeLists.txt").read_text()
    assert "project(fftFilter LANGUAGES CXX HIP)" in fft  # hip-config needs C or CXX
    assert "set_source_files_properties(${FILTER_KERNELS} PROPERTIES LANGUAGE HIP)" in fft
    assert "hip::hipfft" in fft and f'HIP_ARCHITECTURES "{targets}"' in fft
    sort = (hip / "samples" / "sortPairs" / "CMakeLists.txt").read_text()
    assert "target_link_libraries(sortPairs PRIVATE hip::host)" in sort  # main.cpp includes the runtime header


@needs_root
def test_make_follows_the_shared_config_and_keeps_paths_rocm_has(
    builds: dict[str, tuple[FixtureBuild, Path]],
) -> None:
    outcome, hip = builds["rodinia_style"]
    config = (hip / "common" / "make.config").read_text()
    assert "CUDA_DIR = /opt/rocm" in config and "$(CUDA_DIR)/lib;" in config
    assert "SDK_DIR = /usr/local/cuda/samples/" in config  # ROCm has no samples dir: reported, not rewritten
    findings = scan_build_files(hip, ())
    assert any(f.rule_id == "make.cuda-path" and f.file == "common/make.config" and not f.fixable for f in findings)
    heat = (hip / "cuda" / "heat" / "Makefile").read_text()
    assert "C_C = gcc -D__HIP_PLATFORM_AMD__" in heat and "--offload-arch=gfx90a" in heat and "Xptxas" not in heat
    assert {"make.hip-platform-define", "make.nvidia-arch-flag"} <= {str(f["rule_id"]) for f in outcome.fixes}


@needs_root
def test_driver_tool_builds_a_code_object_for_hip_module_load(builds: dict[str, tuple[FixtureBuild, Path]]) -> None:
    _, hip = builds["driver_tool"]
    makefile = (hip / "Makefile").read_text()
    assert "--genco $< -o $@" in makefile and "--offload-arch=gfx90a" in makefile and "-lamdhip64" in makefile
    assert (hip / "burn.fatbin").read_bytes().startswith(b"__CLANG_OFFLOAD_BUNDLE__")


@needs_root
def test_trainer_flags_are_ones_hipcc_accepts(builds: dict[str, tuple[FixtureBuild, Path]]) -> None:
    _, hip = builds["trainer"]
    makefile = (hip / "Makefile").read_text()
    assert "NVCC_FLAGS = -O3  -ffast-math -std=c++17" in makefile and "-lrocm_smi64" in makefile
    assert "$(shell which hipcc 2>/dev/null)" in makefile
    assert any(f.rule_id == "run-config.nvidia-smi" for f in scan_build_files(hip, ()))


@needs_root
def test_a_setup_py_with_a_hip_branch_is_left_as_it_is(builds: dict[str, tuple[FixtureBuild, Path]]) -> None:
    outcome, hip = builds["torch_ext"]
    source = hip.parent / "source"
    assert (hip / "setup.py").read_bytes() == (source / "setup.py").read_bytes()
    assert outcome.fixes == []
    rules = {f.rule_id for f in scan_build_files(source, ())}
    assert {"python-build.nvcc-probe", "python-build.cuda-version-probe", "python-build.nvidia-arch-flag"} <= rules


@needs_root
@pytest.mark.parametrize("name", ["cmake_samples", "driver_tool"])
def test_build_files_follow_sources_renamed_to_hip(tmp_path: Path, name: str) -> None:
    outcome = run_fixture(name, tmp_path, settings=ProjectSettings(rename_cu_to_hip=True))
    assert outcome.built, outcome.log[-3000:]
    assert any(str(fix["rule_id"]).endswith(".renamed-source") for fix in outcome.fixes)
    assert not list((tmp_path / "hip").rglob("*.cu"))
