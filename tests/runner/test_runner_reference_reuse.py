"""A parent's CUDA reference is reused only for the same smoke command and build."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import make_build_dir
from tests.runner.logged_context import LoggedContext
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.runner.reference_reuse import reference_key
from worker.stages import smoke, smoke_presets

PRINT_SUM = "python3 -c \"print('sum = 42.0')\""
PIN = "c" * 64


def _smoke_ctx(tmp_path: Path, run_id: int, **settings: object) -> LoggedContext:
    workspace = Workspace(tmp_path / "run")
    workspace.ensure()
    make_build_dir(workspace)
    return LoggedContext(run_id=run_id, project_id=1, workspace=workspace, settings=ProjectSettings.from_dict(settings),
                         cache_dir=tmp_path / "cache", source_spec={"kind": "archive", "sha256": PIN})


def _parent_reference(ctx: StageContext, command: str) -> None:
    """What the parent run's CUDA reference left in the copied workspace."""
    key = reference_key(ProjectSettings.from_dict({"smoke_command": command}), PIN)
    execution = {"stdout": "sum = 42.0\n", "stderr": "", "exit_code": 0}
    payload = {"ok": True, "summary": "CUDA reference ran (0/0 checks) in 0.1 s", "run_id": 1, "key": key, "execution": execution}
    (ctx.workspace.artifacts / smoke_presets.REFERENCE_ARTIFACT).write_text(json.dumps(payload))


@pytest.fixture(autouse=True)
def _fake_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGRATOR_GPU_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a")


def test_a_rerun_reuses_the_parents_reference_for_the_same_command_and_says_so(tmp_path: Path) -> None:
    ctx = _smoke_ctx(tmp_path, run_id=2, smoke_command=PRINT_SUM)
    _parent_reference(ctx, PRINT_SUM)
    result = smoke.run(ctx)
    reference = result.data["reference"]
    assert reference["available"] and reference["comparison"]["status"] == "equal"
    assert reference["reuse_note"] == "reusing the CUDA reference of run id 1 (same smoke command and build)"
    assert any("reusing the CUDA reference of run id 1" in line for line in ctx.lines)


def test_a_reference_made_for_another_smoke_command_is_not_reused(tmp_path: Path) -> None:
    ctx = _smoke_ctx(tmp_path, run_id=2, smoke_command=PRINT_SUM)
    _parent_reference(ctx, "./old-binary --size 8")
    result = smoke.run(ctx)
    reference = result.data["reference"]
    assert not reference["available"] and reference["comparison"] is None and reference["not_reused"]
    assert reference["summary"].startswith("no CUDA reference for this smoke command and build")


def test_other_build_settings_change_the_key() -> None:
    base = ProjectSettings.from_dict({"smoke_command": PRINT_SUM})
    assert reference_key(base, PIN) == reference_key(ProjectSettings.from_dict({"smoke_command": PRINT_SUM}), PIN)
    assert reference_key(base, PIN) != reference_key(ProjectSettings.from_dict({"smoke_command": PRINT_SUM, "defines": ["N=4"]}), PIN)
    assert reference_key(base, PIN) != reference_key(base, "d" * 64)
