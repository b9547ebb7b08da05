"""What a HIP version needs defined, and where the compile stage puts it (no compiles)."""
from __future__ import annotations

from pathlib import Path

import pytest

from worker.project_settings import ProjectSettings
from worker.toolchain.compile import compile_flags
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.make_build import make_environment
from worker.toolchain.project_build import define_environment, plan_build
from worker.toolchain.targets import project_place, single_target, target_archs
from worker.toolchain.version_defines import WARP_SYNC_BUILTINS, describe_defines, version_defines


@pytest.mark.parametrize(("version", "user", "needed"), [
    ("6.4.43484", (), [WARP_SYNC_BUILTINS]),
    ("6.2.41133", (), [WARP_SYNC_BUILTINS]),
    ("7.0.51831", (), []),
    ("7.2.53211", (), []),
    ("6.4.43484", ("HIP_ENABLE_WARP_SYNC_BUILTINS=1",), []),  # the project defines it already
    ("", (), []),  # an unreadable version: nothing guessed
])
def test_warp_sync_builtins_are_defined_before_hip_7(version: str, user: tuple[str, ...], needed: list[str]) -> None:
    defines = version_defines(version, user)
    assert [d.name for d in defines] == needed
    if needed:
        assert describe_defines(defines).startswith(f"defined {WARP_SYNC_BUILTINS} for every compile: HIP 6.")


def test_per_file_flags_and_project_builds_carry_the_definition(tmp_path: Path) -> None:
    defines = version_defines("6.4.43484")
    settings = ProjectSettings()
    archs, last = list(settings.offload_archs), settings.offload_archs[-1]
    flags = compile_flags(settings, "c++17", [], defines)
    assert f"-D{WARP_SYNC_BUILTINS}" in flags and target_archs(flags) == archs  # every target, one invocation
    assert target_archs(single_target(flags, last)) == [last]
    toolchain = detect_toolchain()
    (tmp_path / "hip").mkdir()
    (tmp_path / "hip" / "CMakeLists.txt").write_text("project(p LANGUAGES CXX HIP)\n")
    _, steps = plan_build(tmp_path / "hip", tmp_path / "build", settings, toolchain, tmp_path, defines=defines)
    configure = steps[0].command
    assert f"-DCMAKE_HIP_FLAGS=-D{WARP_SYNC_BUILTINS}" in configure
    assert f"-DCMAKE_HIP_ARCHITECTURES={';'.join(archs)}" in configure
    (tmp_path / "hip" / "CMakeLists.txt").unlink()
    (tmp_path / "hip" / "Makefile").write_text("all:\n")
    _, steps = plan_build(tmp_path / "hip", tmp_path / "build", settings, toolchain, tmp_path, defines=defines)
    assert steps[0].command[0] == "make" and steps[0].command[-2:] == ["-C", "/workspace/hip"]
    environment = make_environment(settings, defines)  # what every make command of the build gets
    assert environment["HIPFLAGS"].split() == [*(f"--offload-arch={arch}" for arch in archs), f"-D{WARP_SYNC_BUILTINS}"]
    assert environment["HCC_AMDGPU_TARGET"] == ",".join(archs)
    assert environment["HIPCC_COMPILE_FLAGS_APPEND"] == f"-D{WARP_SYNC_BUILTINS}"
    assert define_environment(defines) == {"HIPCC_COMPILE_FLAGS_APPEND": f"-D{WARP_SYNC_BUILTINS}"}
    assert define_environment(()) == {}


def test_an_error_inside_a_rocm_header_is_placed_at_the_project_line() -> None:
    notes = ["/usr/include/hip/amd_detail/amd_warp_sync_functions.h:297:76: expression evaluates to '4 == 8'",
             "reduce.cu:7:10: in instantiation of function template specialization requested here"]
    assert project_place("/usr/include/hip/amd_detail/amd_warp_sync_functions.h", 297, notes) == ("reduce.cu", 7)
    assert project_place("src/k.hip", 3, notes) == ("src/k.hip", 3)
