"""The smoke stage running a validation preset on a (fake) GPU in the sandbox, end to end:
a Python application's translated tree, no build directory, a CUDA reference to compare with."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings, SettingsError
from worker.stages import smoke
from worker.toolchain.roots import select_root

PROGRAMS = Path(__file__).resolve().parent / "programs"
TRAIN = "for i in 0 1 2 3; do echo \"step $i loss 1.$((9 - i))\"; done"


@pytest.fixture(autouse=True)
def _root_and_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    select_root()  # ./dev builds the root; a missing one is an error, not a skip
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a")


def _context(root: Path, preset: dict[str, Any], tmp_path: Path) -> StageContext:
    hip = Workspace(root).hip
    hip.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "openai_server.py", hip)
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root), settings=ProjectSettings.from_dict(
        {"smoke_preset": preset, "smoke_wait_timeout_s": 30}), cache_dir=root / "cache", source_spec={"kind": "archive"})


def test_train_steps_passes_and_compares_with_the_cuda_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("worker.runner.presets.default_lock_dir", lambda: tmp_path / "locks")
    preset = {"preset": "train-steps", "command": TRAIN, "steps": 4}
    ctx = _context(tmp_path / "ws", preset, tmp_path)
    first = smoke.run(ctx)
    assert first.outcome == "passed", first.summary
    assert first.summary.startswith("train-steps passed: 4 finite losses (last 1.6)")
    reference = {"preset": "train-steps", "passed": True, "result": {"metrics": {"losses": [1.9, 1.8, 1.7, 1.0]}}}
    (ctx.workspace.artifacts / "reference.json").write_text(json.dumps(reference))
    compared = smoke.run(ctx)
    assert compared.outcome == "failed" and compared.data["classification"]["kind"] == "preset-failed"
    assert "loss differs from the CUDA reference at step 3" in compared.summary
    assert compared.data["measurements"]["comparison"]["first_outside"] == 3


def test_llm_serve_passes_with_its_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("worker.runner.presets.default_lock_dir", lambda: tmp_path / "locks")
    preset = {"preset": "llm-serve", "command": "python3 openai_server.py {port}", "prompts": ["x y z"],
              "max_tokens": 4, "stop_grace_s": 1.0, "startup_timeout_s": 60}
    result = smoke.run(_context(tmp_path / "ws", preset, tmp_path))
    assert result.outcome == "passed", result.summary
    assert result.summary.startswith("llm-serve passed: TTFT ")
    assert result.data["run"]["result"]["prompts"][0]["text"] == "z y x"
    assert json.loads((tmp_path / "ws/records/smoke.json").read_text())["passed"] is True


def test_a_bad_preset_is_refused_when_saved_with_the_option_named(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="smoke_preset: train-steps: steps must be between 1 and 100000"):
        _context(tmp_path / "ws", {"preset": "train-steps", "command": "x", "steps": 0}, tmp_path)


def test_the_cuda_reference_runs_the_same_preset_and_the_rocm_side_compares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("worker.runner.presets.default_lock_dir", lambda: tmp_path / "locks")
    preset = {"preset": "train-steps", "command": TRAIN, "steps": 4}
    ctx = _context(tmp_path / "ws", preset, tmp_path)
    Workspace(tmp_path / "ws").source.mkdir(parents=True)
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "sm_90")
    reference = smoke.run_reference(ctx)
    assert reference["ok"] and reference["preset"] == "train-steps" and reference["env"]["CUDA_VISIBLE_DEVICES"] == "0"
    assert reference["summary"].startswith("CUDA reference train-steps passed: 4 finite losses")
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a")
    result = smoke.run(ctx)
    assert result.outcome == "passed", result.summary
    assert result.data["measurements"]["comparison"]["within_tolerance"] is True
