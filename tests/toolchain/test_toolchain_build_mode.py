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
    assert "no build file this understands" in choice.reason


def test_explicit_modes_and_a_build_command_decide(tmp_path: Path) -> None:
    hip = tree(tmp_path, {"CMakeLists.txt": CMAKE, "src/app.hip": "int main() {}\n"})
    per_tu = choose_build_mode(hip, ProjectSettings(build_mode="per_tu"))
    assert per_tu.mode == "per_tu" and per_tu.units and "sources from the build files (1 target" in per_tu.reason
    bare = tree(tmp_path / "bare", {"a.hip": "int x;\n"})
    assert choose_build_mode(bare, ProjectSettings(build_command="./build.sh")).mode == "project"
    assert choose_build_mode(bare, ProjectSettings(build_mode="project")).mode == "project"


def test_smoke_runs_where_the_build_put_its_programs(tmp_path: Path) -> None:
    def context(previous: dict[str, object]) -> StageContext:
        return StageContext(1, 1, Workspace(tmp_path), ProjectSettings(), tmp_path / "cache", {},
                            previous={"compile": previous})

    # In the run's work/ folder: the sandbox's /workspace/build and /workspace/hip (the build's copy)
    assert smoke_run_dir(context({"project_build": {"run_dir": "build"}})) == tmp_path / "work" / "build"
    assert smoke_run_dir(context({"project_build": {"run_dir": "hip"}})) == tmp_path / "work" / "hip"
    assert smoke_run_dir(context({"files": []})) == tmp_path / "work" / "build"
    (tmp_path / "work" / "build" / "bin").mkdir(parents=True)
    assert smoke_run_dir(context({"files": []})) == tmp_path / "work" / "build" / "bin"
