"""source_subdir keeps what its build files name from beside it: archives and sparse git clones."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import make_tar_gz
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.sources.beside import KeptPath, common_root, paths_beside
from worker.sources.gitsource import shallow_clone
from worker.stages import fetch

RODINIA_STYLE = {
    "cuda/bfs/Makefile": "include ../../common/make.config\n\nSRC = bfs.cu\nrelease: $(SRC)\n"
                         "\t$(CC) $(SRC) -o bfs -I$(CUDA_DIR)/include -I../util -DTIMING\n",
    "cuda/bfs/bfs.cu": "#include \"timer.h\"\n__global__ void k() {}\nint main() { return 0; }\n",
    "cuda/util/timer.h": "#pragma once\n",
    "common/make.config": "CUDA_DIR = /usr/local/cuda\nCC := $(CUDA_DIR)/bin/nvcc\n",
    "opencl/bfs/Makefile": "include ../../common/make.config\n",
    "data/bfs/graph1MW_6.txt": "1 2\n",
    "README": "benchmarks\n",
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _beside(root: Path, subdir: str) -> list[KeptPath]:
    return paths_beside(root, subdir, lambda path: (root / path).exists())


def test_a_makefile_include_flag_keeps_the_folder_it_names(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"app-a/Makefile": "all:\n\thipcc -I../app-b main.cu -o app\n", "app-a/main.cu": "",
                            "app-b/graph.h": "", "app-c/other.cu": ""})
    kept = _beside(root, "app-a")
    assert [(k.path, k.build_file, k.word) for k in kept] == [("app-b", "app-a/Makefile", "-I../app-b")]
    assert common_root("app-a", [k.path for k in kept]) == ""


def test_a_rodinia_style_make_config_keeps_common_and_nothing_else(tmp_path: Path) -> None:
    root = _tree(tmp_path, RODINIA_STYLE)
    assert [k.path for k in _beside(root, "cuda")] == ["common"]  # ../util stays inside cuda/
    assert sorted(k.path for k in _beside(root, "cuda/bfs")) == ["common", "cuda/util"]
    assert common_root("cuda/bfs", ["cuda/util"]) == "cuda"


def test_cmake_add_subdirectory_include_directories_and_source_dir_variables(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "samples/intro/CMakeLists.txt": "add_subdirectory(hello)\nadd_subdirectory(../x ${CMAKE_BINARY_DIR}/x)\n",
        "samples/intro/hello/CMakeLists.txt":
            'list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_SOURCE_DIR}/../../../cmake/Modules")\n'
            "include_directories(../../../Common)\nadd_executable(hello hello.cu)\n",
        "samples/x/CMakeLists.txt": "add_library(x STATIC x.cu)\ntarget_include_directories(x PUBLIC ../../third)\n",
        "samples/x/x.cu": "", "cmake/Modules/FindThing.cmake": "", "Common/helper.h": "", "third/t.h": "",
        "unrelated/big.cu": ""})
    kept = {k.path: k.word for k in _beside(root, "samples/intro")}
    assert kept == {"samples/x": "../x", "cmake/Modules": "${CMAKE_CURRENT_SOURCE_DIR}/../../../cmake/Modules",
                    "Common": "../../../Common", "third": "../../third"}  # third: named by the kept x/


def test_variables_are_expanded_where_the_file_decides_them_and_unknown_ones_name_nothing(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"app/Makefile": "SHARED = ../shared\nCFLAGS += -I$(SHARED)/inc -I$(SDK)/../sdk\n"
                                            "include ../mk/rules.mk\n",
                            "mk/rules.mk": "LIBS = -L../lib\n", "shared/inc/a.h": "", "lib/libx.a": "", "sdk/s.h": ""})
    assert sorted(k.path for k in _beside(root, "app")) == ["lib", "mk", "shared"]  # lib: named by the fragment


def test_paths_outside_the_repository_absolute_missing_or_holding_the_subdirectory_are_not_kept(
        tmp_path: Path) -> None:
    root = _tree(tmp_path, {"a/b/Makefile": "X = -I../../../../etc -I/usr/include -I../missing -I../.. -I.. "
                                            "-I../../ # -I../c\n", "a/c/c.h": "", "a/b/main.cu": ""})
    assert _beside(root, "a/b") == []  # ../c only in a comment


def test_a_path_the_repository_does_not_hold_is_never_kept(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"app/Makefile": "all:\n\tnvcc -I../inc x.cu\n", "inc/x.h": ""})
    assert paths_beside(root, "app", lambda path: False) == []


def _context(root: Path, spec: dict[str, object], subdir: str) -> StageContext:
    logs: list[str] = []
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root),
                        settings=ProjectSettings.from_dict({"source_subdir": subdir}), cache_dir=root / "cache",
                        source_spec=spec, log=logs.append)


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_the_fetch_stage_keeps_an_archives_subdirectory_with_what_its_build_files_name(tmp_path: Path) -> None:
    archive = tmp_path / "rodinia.tar.gz"
    archive.write_bytes(make_tar_gz(RODINIA_STYLE, top="rodinia"))
    logs: list[str] = []
    ctx = _context(tmp_path / "ws", {"kind": "archive", "path": str(archive), "sha256": "x"}, "cuda/bfs")
    ctx.log = logs.append
    result = fetch.run(ctx)
    assert result.outcome == "passed", result.summary
    source = Workspace(tmp_path / "ws").source
    assert _files(source) == ["common/make.config", "cuda/bfs/Makefile", "cuda/bfs/bfs.cu", "cuda/util/timer.h"]
    assert result.data["project_dir"] == "cuda/bfs"  # common/ and cuda/util/ meet at the top

    archive.write_bytes(make_tar_gz({"cuda/bfs/Makefile": "all:\n\tnvcc -I../util bfs.cu\n", "cuda/util/timer.h": "",
                                     "cuda/bfs/bfs.cu": "", "opencl/x": ""}, top="rodinia"))
    result = fetch.run(_context(tmp_path / "ws1", {"kind": "archive", "path": str(archive), "sha256": "x"}, "cuda/bfs"))
    assert _files(Workspace(tmp_path / "ws1").source) == ["bfs/Makefile", "bfs/bfs.cu", "util/timer.h"]
    assert result.data["project_dir"] == "bfs"  # laid out from cuda/, the deepest folder holding both

    archive.write_bytes(make_tar_gz(RODINIA_STYLE, top="rodinia"))
    result = fetch.run(_context(tmp_path / "ws2", {"kind": "archive", "path": str(archive), "sha256": "x"}, "cuda"))
    source = Workspace(tmp_path / "ws2").source
    assert _files(source) == ["common/make.config", "cuda/bfs/Makefile", "cuda/bfs/bfs.cu", "cuda/util/timer.h"]
    assert result.data["project_dir"] == "cuda"
    assert result.data["kept_beside"] == ["common (cuda/bfs/Makefile: ../../common/make.config)"]
    assert "1 path(s) beside it (common)" in result.summary


def test_the_fetch_log_says_which_paths_were_kept_and_why(tmp_path: Path) -> None:
    archive = tmp_path / "suite.tar.gz"
    archive.write_bytes(make_tar_gz({"app-a/Makefile": "all:\n\thipcc -I../app-b main.cu\n", "app-a/main.cu": "",
                                     "app-b/graph.h": "", "app-c/c.cu": ""}))
    logs: list[str] = []
    ctx = _context(tmp_path / "ws", {"kind": "archive", "path": str(archive), "sha256": "x"}, "app-a")
    ctx.log = logs.append
    assert fetch.run(ctx).outcome == "passed"
    assert "  app-b: app-a/Makefile names -I../app-b\n" in "".join(logs)
    assert _files(ctx.workspace.source) == ["app-a/Makefile", "app-a/main.cu", "app-b/graph.h"]


def test_without_paths_beside_the_subdirectory_is_the_tree_as_before(tmp_path: Path) -> None:
    archive = tmp_path / "k.tar.gz"
    archive.write_bytes(make_tar_gz({"kernels/Makefile": "all:\n\thipcc a.cu\n", "kernels/a.cu": "", "docs/x": ""}))
    result = fetch.run(_context(tmp_path / "ws", {"kind": "archive", "path": str(archive), "sha256": "x"}, "kernels"))
    assert _files(Workspace(tmp_path / "ws").source) == ["Makefile", "a.cu"]
    assert result.data["project_dir"] == "" and result.data["kept_beside"] == []


def test_a_symbolic_link_beside_the_subdirectory_is_not_followed(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", {"app/Makefile": "all:\n\thipcc -I../linked x.cu\n", "real/x.h": ""})
    os.symlink("real", root / "linked")
    assert paths_beside(root, "app", lambda path: fetch._exists_in(root, path)) == []


@pytest.fixture
def rodinia_repo(tmp_path: Path) -> Path:
    repo = _tree(tmp_path / "upstream", {**RODINIA_STYLE, "opencl/big.txt": "x" * 100_000})
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "one"],
                 ["config", "uploadpack.allowFilter", "true"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return repo


def test_a_sparse_clone_adds_the_folders_the_build_files_name_to_its_cone(rodinia_repo: Path, tmp_path: Path) -> None:
    logs: list[str] = []
    shallow_clone(f"file://{rodinia_repo}", "main", tmp_path / "out", allow_local=True, log=logs.append,
                  sparse_dir="cuda",
                  beside=lambda root, exists, is_file: [k.path for k in paths_beside(root, "cuda", exists, is_file)])
    assert _files(tmp_path / "out") == ["README", "common/make.config", "cuda/bfs/Makefile", "cuda/bfs/bfs.cu",
                                        "cuda/util/timer.h"]
    assert any("sparse-checkout add -- common" in line for line in logs)


def test_a_sparse_clone_of_a_deeper_folder_adds_a_sibling_folder_not_yet_checked_out(
        rodinia_repo: Path, tmp_path: Path) -> None:
    spec = {"kind": "git", "url": f"file://{rodinia_repo}", "ref": "main", "allow_local": True}
    result = fetch.run(_context(tmp_path / "ws", spec, "cuda/bfs"))
    assert result.outcome == "passed", result.summary
    assert _files(Workspace(tmp_path / "ws").source) == [
        "common/make.config", "cuda/bfs/Makefile", "cuda/bfs/bfs.cu", "cuda/util/timer.h"]
    assert result.data["project_dir"] == "cuda/bfs"


def test_the_fetch_stage_narrows_a_sparse_clone_with_its_paths_beside(rodinia_repo: Path, tmp_path: Path) -> None:
    spec = {"kind": "git", "url": f"file://{rodinia_repo}", "ref": "main", "allow_local": True}
    result = fetch.run(_context(tmp_path / "ws", spec, "cuda"))
    assert result.outcome == "passed", result.summary
    assert _files(Workspace(tmp_path / "ws").source) == [
        "common/make.config", "cuda/bfs/Makefile", "cuda/bfs/bfs.cu", "cuda/util/timer.h"]
    assert result.data["project_dir"] == "cuda" and result.data["commit"]
