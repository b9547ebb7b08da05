import json
from pathlib import Path

import pytest

from tests.conftest import make_build_dir
from tests.markers import requires_nvcc
from tests.runner.logged_context import LoggedContext
from worker.context import StageCancelled, StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import smoke

PRINT_SUM = "python3 -c \"print('sum = 42.0')\""


@pytest.fixture(autouse=True)
def _isolated_locks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGRATOR_GPU_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a,gfx90a")


def _ctx(tmp_path: Path, **settings: object) -> LoggedContext:
    workspace = Workspace(tmp_path / "run")
    workspace.ensure()
    make_build_dir(workspace)
    return LoggedContext(
        run_id=1, project_id=1, workspace=workspace, settings=ProjectSettings.from_dict(settings),
        cache_dir=tmp_path / "cache", source_spec={},
    )


def test_without_a_smoke_command_the_stage_is_skipped(tmp_path: Path) -> None:
    result = smoke.run(_ctx(tmp_path))
    assert result.outcome == "skipped" and result.summary == "no smoke command configured in project settings"


def test_it_passes_when_the_checks_pass_and_records_the_run(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, smoke_command=PRINT_SUM, smoke_checks=[
        {"kind": "text", "pattern": "sum ="}, {"kind": "numeric", "pattern": "^sum", "expected": "42"}])
    result = smoke.run(ctx)
    assert result.outcome == "passed", result.summary
    assert result.data["classification"] is None
    assert [c["passed"] for c in result.data["checks"]] == [True, True, True]
    assert result.data["execution"]["stdout"] == "sum = 42.0\n"
    assert result.data["gpu"]["fake"] and result.data["env"] == {"HIP_VISIBLE_DEVICES": "0"}
    assert json.loads((ctx.workspace.artifacts / "smoke.json").read_text())["execution"]["exit_code"] == 0
    json.dumps(result.data)  # storable on the Stage row
    assert any("leased GPU 0" in line for line in ctx.lines)


def test_a_failing_check_fails_the_stage(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, smoke_command=PRINT_SUM, smoke_checks=[{"kind": "numeric", "pattern": "^sum", "expected": "41"}])
    result = smoke.run(ctx)
    assert result.outcome == "failed" and result.data["classification"]["kind"] == "checks-failed"
    assert "expected 41.0" in result.summary


def test_a_device_error_in_the_output_is_classified(tmp_path: Path) -> None:
    command = "python3 -c \"import sys; print('HIP error hipErrorNoDevice', file=sys.stderr); sys.exit(1)\""
    result = smoke.run(_ctx(tmp_path, smoke_command=command))
    assert result.outcome == "failed"
    assert result.data["classification"]["notebook_slug"] == "no-amd-gpu-visible"


def test_a_machine_without_an_amd_gpu_fails_with_no_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MIGRATOR_FAKE_GPUS")
    result = smoke.run(_ctx(tmp_path, smoke_command=PRINT_SUM))
    assert result.outcome == "failed" and result.data["classification"]["kind"] == "no-device"
    assert "no AMD GPU" in result.summary and result.data["execution"] is None


def _write_reference(ctx: StageContext, stdout: str) -> None:
    # run_id: made by this run (a parent's reference is reused only with a matching key).
    payload = {"ok": True, "summary": "CUDA reference ran", "run_id": ctx.run_id, "execution": {"stdout": stdout, "stderr": ""}}
    (ctx.workspace.artifacts / "reference.json").write_text(json.dumps(payload))


def test_output_is_compared_with_the_cuda_reference(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, smoke_command=PRINT_SUM)
    _write_reference(ctx, "sum = 42.0000001\n")
    result = smoke.run(ctx)
    assert result.outcome == "passed"
    assert result.data["reference"]["comparison"]["status"] == "within-tolerance"


def test_output_unlike_the_reference_fails_the_stage(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, smoke_command=PRINT_SUM)
    _write_reference(ctx, "sum = 40.0\n")
    result = smoke.run(ctx)
    assert result.outcome == "failed" and result.data["classification"]["kind"] == "output-differs"


VECADD = r"""
#include <cstdio>
int main() {
  float* d = nullptr;
  cudaError_t e = cudaMalloc(&d, 1024);
  if (e != cudaSuccess) { fprintf(stderr, "CUDA error %s\n", cudaGetErrorName(e)); return 1; }
  printf("sum = 42.0\n");
  return 0;
}
"""


@requires_nvcc
def test_run_reference_builds_with_nvcc_runs_and_writes_the_artifact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "sm_90")
    ctx = _ctx(tmp_path, smoke_command="./vecadd")
    ctx.workspace.source.mkdir()
    (ctx.workspace.source / "vecadd.cu").write_text(VECADD)
    reference = smoke.run_reference(ctx)
    assert reference["build"]["ok"] and reference["build"]["arch"] == "sm_90"
    # No NVIDIA driver on this machine: the run happens and is classified.
    assert reference["execution"]["exit_code"] == 1 and not reference["ok"]
    # The real CUDA runtime's words when the machine has no driver (cudaErrorInsufficientDriver).
    assert reference["classification"]["kind"] == "no-device"
    assert "CUDA error cudaError" in reference["classification"]["evidence"]
    stored = json.loads((ctx.workspace.artifacts / "reference.json").read_text())
    assert stored["summary"] == reference["summary"] and "CUDA reference failed" in stored["summary"]


def test_a_cancelled_run_raises_stage_cancelled(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, smoke_command="sleep 300")
    answers = iter([False, False])  # not cancelled at the start, then cancelled while it runs
    ctx.is_cancelled = lambda: next(answers, True)
    with pytest.raises(StageCancelled):
        smoke.run(ctx)
    assert "$ sleep 300\n" in ctx.lines  # it did start, and was stopped
