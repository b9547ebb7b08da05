"""Which build the compile stage runs: the project's own where its build files are understood, else file by file."""
from __future__ import annotations

from pathlib import Path

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages.smoke import smoke_run_dir
from worker.toolchain.build_mode import choose_build_mode

CMAKE = "cmake_minimum_required(VERSION 3.21)\nproject(demo LANGUAGES CXX HIP)\nadd_executable(app src/app.hip)\n"


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_auto_runs_the_projects_own_build_when_its_cmake_is_understood(tmp_path: Path) -> None:
    hip = tree(tmp_path, {"CMakeLists.txt": CMAKE, "src/app.hip": "int main() {}\n"})
    choice = choose_build_mode(hip, ProjectSettings())
    assert choice.mode == "project" and [u.name for u in choice.units] == ["app"]
    assert choice.reason == ("build_mode auto: the project's own build (1 target in CMakeLists.txt); "
                             "set build_mode to per_tu to compile file by file")


def test_auto_compiles_file_by_file_without_a_build_file_it_understands(tmp_path: Path) -> None:
    hip = tree(tmp_path, {"CMakeLists.txt": "set(CMAKE_CUDA_STANDARD 14)\n", "a.hip": "int x;\n"})
    choice = choose_build_mode(hip, ProjectSettings())
    assert choice.mode == "per_tu" and choice.units == []
    assert "CMakeLists.txt at the top names no target" in choice.reason
    assert choice.reason.endswith("(built file by file, not with the project's build)")


SUITE_MAKEFILE = "CC = nvcc\nARCH = sm_60\n{name}: {name}.cu\n\t$(CC) -arch=$(ARCH) -I../include -o $@ $<\n"


def test_auto_builds_each_app_folder_of_a_suite_with_its_own_makefile(tmp_path: Path) -> None:
    hip = tree(tmp_path, {"include/common.h": "#pragma once\n", "README.md": "suite\n",
                          **{f"{n}/Makefile": SUITE_MAKEFILE.format(name=n) for n in ("scan", "stencil")},
                          **{f"{n}/{n}.cu": '#include "hip/hip_runtime.h"\nint main() {}\n' for n in ("scan", "stencil")},
                          "tools/win/helper_d3d11.cpp": '#include <d3d11.h>\n#include "hip/hip_runtime.h"\n'})
    choice = choose_build_mode(hip, ProjectSettings())
    assert choice.mode == "project" and choice.make_folders == ["scan", "stencil"]
    assert choice.reason == ("build_mode auto: the project's own build, make in scan/Makefile, stencil/Makefile, "
                             "beside the CUDA sources (2 build folders, each its own unit); set build_mode to per_tu "
                             "to compile file by file")


def test_a_cmakelists_without_targets_does_not_hide_the_makefile_beside_it(tmp_path: Path) -> None:
    hip = tree(tmp_path, {"app/CMakeLists.txt": "suite_add_sample(app)\n", "app/Makefile": SUITE_MAKEFILE.format(name="app"),
                          "app/app.cu": "int main() {}\n", "CMakeLists.txt": "add_subdirectory(app)\n"})
    choice = choose_build_mode(hip, ProjectSettings())
    assert choice.mode == "project" and choice.make_folders == ["app"]


def test_a_library_only_cpp_program_builds_with_the_makefile_above_it(tmp_path: Path) -> None:
    hip = tree(tmp_path, {"samples/solver/Makefile": "all:\n\thipcc -o solve main.cpp -lhipsolver\n",
                          "samples/solver/main.cpp": "#include <hipsolver/hipsolver.h>\nint main() {}\n",
                          "samples/solver/util/io.cpp": "#include <hip/hip_runtime.h>\n"})
    choice = choose_build_mode(hip, ProjectSettings())
    assert choice.make_folders == ["samples/solver"]


def test_a_top_level_makefile_is_one_unit_and_per_file_says_why_without_one(tmp_path: Path) -> None:
    top = tree(tmp_path / "top", {"Makefile": "all:\n\t$(MAKE) -C a\n", "a/Makefile": "x:\n\ttrue\n", "a/k.cu": ""})
    assert choose_build_mode(top, ProjectSettings()).make_folders == ["."]
    bare = tree(tmp_path / "bare", {"src/k.cu": "", "docs/Makefile": "html:\n\ttrue\n"})
    choice = choose_build_mode(bare, ProjectSettings())
    assert choice.mode == "per_tu" and "no Makefile at the top of the tree or beside the CUDA sources" in choice.reason


def test_explicit_modes_and_a_build_command_decide(tmp_path: Path) -> None:
    hip = tree(tmp_path, {"CMakeLists.txt": CMAKE, "src/app.hip": "int main() {}\n"})
    per_tu = choose_build_mode(hip, ProjectSettings(build_mode="per_tu"))
    assert per_tu.mode == "per_tu" and per_tu.units and "sources from the build files (1 target" in per_tu.reason
    bare = tree(tmp_path / "bare", {"a.hip": "int x;\n"})
    assert choose_build_mode(bare, ProjectSettings(build_command="./build.sh")).mode == "project"
    assert choose_build_mode(bare, ProjectSettings(build_mode="project")).mode == "project"


def test_smoke_runs_where_the_build_put_its_programs(tmp_path: Path) -> None:
    def context(previous: dict[str, object], fetch: dict[str, object] | None = None) -> StageContext:
        return StageContext(1, 1, Workspace(tmp_path), ProjectSettings(), tmp_path / "cache", {},
                            previous={"compile": previous, "fetch": fetch or {}})

    # In the run's work/ folder: the sandbox's /workspace/build and /workspace/hip (the build's copy)
    assert smoke_run_dir(context({"project_build": {"run_dir": "build"}})) == tmp_path / "work" / "build"
    assert smoke_run_dir(context({"project_build": {"run_dir": "hip"}})) == tmp_path / "work" / "hip"
    assert smoke_run_dir(context({"files": []})) == tmp_path / "work" / "build"
    (tmp_path / "work" / "build" / "bin").mkdir(parents=True)
    assert smoke_run_dir(context({"files": []})) == tmp_path / "work" / "build" / "bin"
    # source_subdir with the paths beside it kept: make ran in the subdirectory, so the programs are there
    made: dict[str, object] = {"project_build": {"run_dir": "hip"}}
    assert smoke_run_dir(context(made, {"project_dir": "cuda/bfs"})) == tmp_path / "work" / "hip"  # not made yet
    (tmp_path / "work" / "hip" / "cuda" / "bfs").mkdir(parents=True)
    assert smoke_run_dir(context(made, {"project_dir": "cuda/bfs"})) == tmp_path / "work" / "hip" / "cuda" / "bfs"
    assert smoke_run_dir(context({"project_build": {"run_dir": "build"}}, {"project_dir": "cuda/bfs"})) == (
        tmp_path / "work" / "build")


def test_a_documentation_makefile_at_the_top_does_not_hide_the_one_beside_the_sources(tmp_path: Path) -> None:
    hip = tree(tmp_path, {"Makefile": "html:\n\tsphinx-build -b html docs build/html\n",
                          "src/Makefile": "app: app.cu\n\thipcc -o app app.cu\n", "src/app.cu": "int main() {}\n"})
    assert choose_build_mode(hip, ProjectSettings()).make_folders == ["src"]
