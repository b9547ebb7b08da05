"""The hipify stage, the CLI and the external engines' statistics."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from translator.external import parse_statistics
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import hipify
from worker.toolchain.detect import detect_toolchain

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "#include <cuda_runtime.h>\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); cudaInitDevice(0, 0, 0); }\n"


def make_context(tmp_path: Path, **settings: object) -> tuple[StageContext, list[str], list[tuple[int, int]]]:
    workspace = Workspace(tmp_path / "run")
    (workspace.source / "src").mkdir(parents=True)
    (workspace.source / "src" / "main.cu").write_text(SOURCE)
    (workspace.source / "notes.txt").write_text("hello\n")
    logs: list[str] = []
    progress: list[tuple[int, int]] = []
    ctx = StageContext(run_id=1, project_id=1, workspace=workspace, cache_dir=tmp_path / "cache", source_spec={},
                       settings=ProjectSettings.from_dict({"target_hip_version": "5.2", **settings}),
                       log=logs.append, progress=lambda d, t: progress.append((d, t)))
    return ctx, logs, progress


def test_it_translates_the_workspace_and_writes_the_account(tmp_path: Path) -> None:
    ctx, logs, progress = make_context(tmp_path, launch_style="ggl", rename_cu_to_hip=True)
    result = hipify.run(ctx)
    assert result.outcome == "passed", result.summary
    out = (ctx.workspace.hip / "src" / "main.hip").read_text()
    assert "hipLaunchKernelGGL(k, dim3(1), dim3(1), 0, 0);" in out
    assert (ctx.workspace.hip / "notes.txt").read_text() == "hello\n"
    assert result.data["renames"] == {"src/main.cu": "src/main.hip"}
    assert [f["path"] for f in result.data["files"]] == ["src/main.cu"]  # copied files are left out of data
    assert result.data["files"][0]["unconverted"][0]["name"] == "cudaInitDevice"
    assert result.data["notebook_slugs"] == ["hipify-unconverted"]
    full = json.loads((ctx.workspace.artifacts / result.data["account_artifact"]).read_text())
    assert len(full["files"]) == 2
    json.dumps(result.data)
    assert progress[-1] == (2, 2) and any("src/main.cu" in line for line in logs)


def test_it_fails_clearly_when_the_external_engine_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "no-rocm"))
    ctx, _, _ = make_context(tmp_path, hipify_engine="hipify-clang")
    result = hipify.run(ctx)
    assert result.outcome == "failed"
    assert f"hipify-clang is not in the toolchain {detect_toolchain().name}" in result.summary


def test_it_fails_without_a_source_tree(tmp_path: Path) -> None:
    ctx, _, _ = make_context(tmp_path)
    ctx.workspace = Workspace(tmp_path / "elsewhere")
    assert hipify.run(ctx).outcome == "failed"


PERL_OUTPUT = """  /tmp/t1.cu:17: warning: deprecated CUDA identifier: cudaThreadSynchronize since CUDA 10.0
  /tmp/t1.cu:18: warning: unsupported HIP identifier: cudaDeviceFlushGPUDirectRDMAWrites
  warning: /tmp/t1.cu:#20 :   cudaFooBar();

[HIPIFY] info: file '/tmp/t1.cu' statistics:
  CONVERTED refs count: 4
  TOTAL lines of code: 27
  WARNINGS: 3
[HIPIFY] info: CONVERTED refs by names:
  cudaMalloc => hipMalloc: 3
  cuda_runtime.h => hip/hip_runtime.h: 1
"""


def test_it_parses_hipify_perl_statistics_into_the_account_shape() -> None:
    account = parse_statistics(PERL_OUTPUT, "t1.cu")
    assert account.converted == {"memory": 3, "header": 1}
    assert account.deprecated == [{"name": "cudaThreadSynchronize", "line": 17, "column": 0, "reason": "deprecated"}]
    assert account.unconverted == [
        {"name": "cudaDeviceFlushGPUDirectRDMAWrites", "line": 18, "column": 0, "reason": "unsupported"}]
    assert account.warnings == ["20 :   cudaFooBar();"]


def test_it_runs_the_toolchains_hipify_perl_in_the_sandbox(tmp_path: Path) -> None:
    ctx, _, _ = make_context(tmp_path, hipify_engine="hipify-perl")
    result = hipify.run(ctx)
    assert result.outcome == "passed", result.summary
    assert "hip/hip_runtime.h" in (ctx.workspace.hip / "src" / "main.cu").read_text()
    assert result.data["totals"]["converted"].get("header") == 1
    assert result.data["engine"] == "hipify-perl"


def test_the_cli_translates_a_tree_and_prints_a_summary(tmp_path: Path) -> None:
    ctx, _, _ = make_context(tmp_path)
    out = subprocess.run([sys.executable, "-m", "translator", str(ctx.workspace.source), "-o", str(tmp_path / "o"),
                          "--target-hip-version", "5.2", "--account", str(tmp_path / "a.json")],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "2 files, 1 changed, 2 references converted, 1 unconverted" in out
    assert json.loads((tmp_path / "a.json").read_text())["totals"]["changed"] == 1


CLANG_OUTPUT = """
[HIPIFY] info: file 'k.cu' statistics:
  CONVERTED refs count: 5
  UNCONVERTED refs count: 1
  TOTAL lines of code: 20
k.cu:7:3: warning: CUDA identifier is unsupported in HIP: 'cudaDeviceFlushGPUDirectRDMAWrites'
[HIPIFY] info: CONVERTED refs by type:
  memory: 3
  execution: 1
  include_cuda_main_header: 1
[HIPIFY] info: CONVERTED refs by API:
  CUDA RT API: 5
[HIPIFY] info: CONVERTED refs by names:
  cudaMalloc: 3
  cudaLaunchKernel: 1
  cuda_runtime.h: 1
[HIPIFY] info: UNCONVERTED refs by names:
  cudaDeviceFlushGPUDirectRDMAWrites: 1
"""


def test_it_parses_hipify_clang_statistics_by_type() -> None:
    account = parse_statistics(CLANG_OUTPUT, "k.cu")
    assert account.converted == {"memory": 3, "kernel-launch": 1, "header": 1}
    assert account.unconverted == [
        {"name": "cudaDeviceFlushGPUDirectRDMAWrites", "line": 7, "column": 3, "reason": "unsupported"}]


def test_the_stage_applies_the_wavefront_fixes_and_lists_every_hazard(tmp_path: Path) -> None:
    ctx, logs, _ = make_context(tmp_path, disabled_fix_rules=["wavefront.popcll-ballot"])
    (ctx.workspace.source / "src" / "vote.cu").write_text(
        "__global__ void vote(const int* x, int* out) {\n"
        "  unsigned m = __ballot_sync(0xffffffff, x[threadIdx.x] > 0);\n"
        "  out[blockIdx.x] = __popc(m);\n}\n")
    result = hipify.run(ctx)
    assert result.outcome == "passed", result.summary
    rows = [(h["file"], h["line"], h["kind"], h["rule"], h["applied"]) for h in result.data["wavefront_hazards"]]
    assert rows == [("src/vote.cu", 2, "ballot-32bit", "wavefront.widen-ballot", True),
                    ("src/vote.cu", 2, "full-mask-32", "wavefront.full-mask-64", True),
                    ("src/vote.cu", 3, "popc-ballot", "wavefront.popcll-ballot", False)]
    out = (ctx.workspace.hip / "src" / "vote.cu").read_text()
    assert "unsigned long long m = __ballot_sync(0xffffffffffffffffull," in out and "__popc(m)" in out
    assert result.data["totals"]["wavefront_fixed"] == 2
    assert any("wavefront src/vote.cu:3: popc-ballot" in line for line in logs)
