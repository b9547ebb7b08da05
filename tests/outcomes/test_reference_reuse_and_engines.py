"""A parent's CUDA reference is reused only for the same smoke command and build; an external hipify
engine that fails on some files fails the stage with the count."""
from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.runner.reference_reuse import reference_key
from worker.stages import hipify, smoke

PRINT_SUM = "python3 -c \"print('sum = 42.0')\""
PIN = "c" * 64


def _smoke_ctx(tmp_path: Path, run_id: int, **settings: object) -> StageContext:
    workspace = Workspace(tmp_path / "run")
    workspace.ensure()
    workspace.build.mkdir(exist_ok=True)
    lines: list[str] = []
    ctx = StageContext(run_id=run_id, project_id=1, workspace=workspace, settings=ProjectSettings.from_dict(settings),
                       cache_dir=tmp_path / "cache", source_spec={"kind": "archive", "sha256": PIN}, log=lines.append)
    ctx.lines = lines  # type: ignore[attr-defined]
    return ctx


def _parent_reference(ctx: StageContext, command: str) -> None:
    """What the parent run's CUDA reference left in the copied workspace."""
    key = reference_key(ProjectSettings.from_dict({"smoke_command": command}), PIN)
    execution = {"stdout": "sum = 42.0\n", "stderr": "", "exit_code": 0}
    payload = {"ok": True, "summary": "CUDA reference ran (0/0 checks) in 0.1 s", "run_id": 1, "key": key, "execution": execution}
    (ctx.workspace.artifacts / smoke.REFERENCE_ARTIFACT).write_text(json.dumps(payload))


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
    assert any("reusing the CUDA reference of run id 1" in line for line in ctx.lines)  # type: ignore[attr-defined]


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


ENGINE = """#!/bin/sh
# A hipify-perl stand-in: translates like the real one's -o= form, but fails on files holding BROKEN.
for arg in "$@"; do case "$arg" in -o=*) out="${arg#-o=}";; -*) ;; *) src="$arg";; esac; done
if grep -q BROKEN "$src"; then echo "syntax error at $src line 3" >&2; exit 2; fi
sed 's/cudaMalloc/hipMalloc/g' "$src" > "$out"
"""


def test_an_external_engine_failing_on_some_files_fails_the_stage_with_the_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hipify-perl").write_text(ENGINE)
    (bin_dir / "hipify-perl").chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    workspace = Workspace(tmp_path / "run")
    (workspace.source / "src").mkdir(parents=True)
    (workspace.source / "src" / "a.cu").write_text("void f(float** p) { cudaMalloc(p, 4); }\n")
    (workspace.source / "src" / "b.cu").write_text("// BROKEN\nvoid g() {}\n")
    (workspace.source / "src" / "c.cu").write_text("void h(float** p) { cudaMalloc(p, 8); }\n")
    workspace.ensure()
    ctx = StageContext(run_id=1, project_id=1, workspace=workspace, cache_dir=tmp_path / "cache", source_spec={},
                       settings=ProjectSettings.from_dict({"hipify_engine": "hipify-perl"}))
    result = hipify.run(ctx)
    assert result.outcome == "failed"
    assert result.summary == "hipify-perl failed on 1 of 3 files (src/b.cu); they were left untranslated"
    assert (workspace.hip / "src" / "a.cu").read_text().count("hipMalloc") == 1
