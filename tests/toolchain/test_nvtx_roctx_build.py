"""NVTX programs of our own (tests/fixtures/nvtx) build and link in the ROCm 7.2 root, which has roctx: the
translation maps nvtxRangePushA/nvtxRangePop/nvtxMarkA to roctx, and the converted build links roctx64 (rules
cmake.nvtx-roctx-link and make.nvtx-roctx-link, shown among the build-file fixes)."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from worker.context import StageContext, StageResult, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.stages import hipify, link, scan
from worker.toolchain.detect import detect_toolchain

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvtx"
SETTINGS = ProjectSettings(offload_archs=("gfx90a",), toolchain="rocm-7.2")


def run_pipeline(name: str, root: Path) -> tuple[Workspace, dict[str, StageResult], str]:
    workspace = Workspace(root)
    shutil.copytree(FIXTURES / name, workspace.source)
    results: dict[str, StageResult] = {}
    log: list[str] = []
    previous: dict[str, dict[str, Any]] = {}
    for stage_name, stage in (("scan", scan), ("hipify", hipify), ("compile", compile_stage), ("link", link)):
        ctx = StageContext(1, 1, workspace, SETTINGS, root / "cache", {"kind": "archive"}, previous=dict(previous),
                           log=log.append)
        results[stage_name] = stage.run(ctx)
        previous[stage_name] = results[stage_name].data
    return workspace, results, "".join(log)


@pytest.fixture(scope="module")
def piped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Workspace, dict[str, StageResult], str]]]:
    if not detect_toolchain("rocm-7.2").available:
        pytest.skip("the rocm-7.2 toolchain root is not installed")
    base = tmp_path_factory.mktemp("nvtx")
    yield {name: run_pipeline(name, base / name) for name in ("cmake_app", "make_app")}


@pytest.mark.parametrize(("name", "build_file", "rule", "linked"), [
    ("cmake_app", "CMakeLists.txt", "cmake.nvtx-roctx-link", "target_link_libraries(graphsteps PRIVATE roctx64)"),
    ("make_app", "Makefile", "make.nvtx-roctx-link", "-o $@ $< -lroctx64"),
])
def test_an_nvtx_program_builds_and_links_against_roctx(
        piped: dict[str, tuple[Workspace, dict[str, StageResult], str]], name: str, build_file: str, rule: str,
        linked: str) -> None:
    workspace, results, log = piped[name]
    assert [results[s].outcome for s in ("scan", "hipify", "compile", "link")] == ["passed"] * 4, log[-3000:]
    fixes = [f for f in results["hipify"].data["build_fixes"] if f["rule_id"] == rule]
    assert [f["file"] for f in fixes] == [build_file]
    assert linked in (workspace.hip / build_file).read_text()
    assert "roctxRangePushA" in log or "roctxRangePushA" in "".join(
        p.read_text() for p in workspace.hip.rglob("*.cu"))
    assert f"[{rule}]" in log
