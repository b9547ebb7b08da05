"""A build that plants a link at every name the pipeline records under, pointing at a host file: the
root side writes nothing through them, for the per-file compile (cold and from the object cache), the
project build, link, smoke, the CUDA reference and a preset. Canary files outside show that nothing
there was written, created or removed; the records are real files in the run's records folder.

Smoke and presets run on a device faked with ``MIGRATOR_FAKE_GPUS`` (no AMD GPU here); everything else
is real: the toolchain root, the sandbox, hipcc and nvcc.
"""
from __future__ import annotations

import json
import shutil
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from tests.markers import requires_nvcc
from tests.runner.logged_context import LoggedContext
from tests.security.planted import Canaries, plant_script
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.stages import link as link_stage
from worker.stages import smoke as smoke_stage
from worker.toolchain.work import open_work

PROGRAMS = Path(__file__).resolve().parents[1] / "pytorch_projects" / "programs"
KERNEL_HIP = """#include <hip/hip_runtime.h>
#include <cstdio>
__global__ void k(int* x) { *x = 42; }
int main() {
  int* x = nullptr;
  hipError_t err = hipMalloc(&x, sizeof(int));
  printf("k: %s\\n", hipGetErrorString(err));
  return err == hipSuccess ? 0 : 1;
}
"""
KERNEL_CU = KERNEL_HIP.replace("hip/hip_runtime.h", "cuda_runtime.h").replace("hip", "cuda")
PLANT = "sh /workspace/source/plant.sh"  # the same path in every layout: the source is read-only there


@pytest.fixture(autouse=True)
def _fake_gpu_and_locks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGRATOR_GPU_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a")


def hostile_run(tmp_path: Path, host: Path) -> LoggedContext:
    """A run whose tree carries the planting script, translated (hip/) and original (source/)."""
    workspace = Workspace(tmp_path / "runs" / "7")
    workspace.ensure()
    for tree, kernel in ((workspace.hip, KERNEL_HIP), (workspace.source, KERNEL_CU)):
        (tree / "src").mkdir(parents=True)
        (tree / "src" / f"k.{'hip' if tree == workspace.hip else 'cu'}").write_text(kernel)
        (tree / "plant.sh").write_text(plant_script(host))
        shutil.copy(PROGRAMS / "openai_server.py", tree)
    return LoggedContext(run_id=7, project_id=1, workspace=workspace, settings=ProjectSettings(build_mode="per_tu"),
                         cache_dir=tmp_path / "cache", source_spec={"kind": "archive", "sha256": "ab" * 32})


def with_settings(ctx: LoggedContext, previous: dict[str, dict[str, object]] | None = None,
                  **settings: object) -> LoggedContext:
    return replace(ctx, settings=ProjectSettings.from_dict({"build_mode": "per_tu", **settings}),
                   previous=previous if previous is not None else ctx.previous, lines=[])


def assert_records(ctx: StageContext, *names: str) -> None:
    """Each record is a regular file of the run's records folder (written there, not through a link)."""
    for name in names:
        info = (ctx.workspace.artifacts / name).lstat()
        assert stat.S_ISREG(info.st_mode), f"{name} is not a regular file of the records folder"


def test_no_stage_writes_through_the_links_a_build_planted(tmp_path: Path) -> None:
    canaries = Canaries(tmp_path / "host")
    ctx = hostile_run(tmp_path, canaries.host)

    cold = compile_stage.run(ctx)  # per file, filling the object cache
    assert cold.outcome == "passed", cold.summary
    canaries.check("per-file compile")

    built = compile_stage.run(with_settings(ctx, build_mode="project", build_command=PLANT))
    assert built.outcome == "passed", built.summary
    canaries.check("project build")
    with open_work(ctx.workspace):  # the attack did happen, on the run's work volume
        planted = ctx.workspace.work / "artifacts" / "compile.json"
        assert planted.is_symlink() and (ctx.workspace.work / "build" / "obj").is_symlink()
    assert json.loads((ctx.workspace.artifacts / "compile.json").read_text())["mode"] == "project"

    warm = compile_stage.run(ctx)  # per file again: the object comes from the cache, into a planted obj/
    canaries.check("per-file compile from the object cache")
    assert warm.outcome == "passed" and warm.data["cache"]["hits"] == 1, warm.summary

    linked = link_stage.run(with_settings(ctx, previous={"compile": warm.data}))
    canaries.check("link")
    assert linked.outcome == "passed", linked.summary

    smoke = smoke_stage.run(with_settings(ctx, previous={"compile": warm.data}, smoke_command=f"{PLANT}; ./k"))
    canaries.check("smoke")
    assert smoke.data["execution"] is not None and smoke.data["gpu"]["fake"], smoke.summary
    assert "planted links to" in smoke.data["execution"]["stdout"]

    preset = {"preset": "llm-serve", "command": f"{PLANT} >&2; python3 /workspace/source/openai_server.py {{port}}",
              "prompts": ["a b c"], "max_tokens": 4, "stop_grace_s": 1.0, "startup_timeout_s": 60}
    served = smoke_stage.run(with_settings(ctx, previous={"compile": warm.data}, smoke_preset=preset,
                                           smoke_wait_timeout_s=30))
    canaries.check("preset")
    assert served.outcome == "passed", served.summary
    assert canaries.changed == {}, "the root side wrote through links a build planted"
    assert_records(ctx, "compile.json", "link.json", "smoke.json", "preset/spec.json", "preset/preset_serve.py")


@requires_nvcc
def test_the_cuda_reference_writes_nothing_through_a_planted_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canaries = Canaries(tmp_path / "host")
    ctx = hostile_run(tmp_path, canaries.host)
    built = compile_stage.run(with_settings(ctx, build_mode="project", build_command=PLANT))
    assert built.outcome == "passed", built.summary
    canaries.check("project build")
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "sm_90")
    reference = smoke_stage.run_reference(with_settings(ctx, smoke_command=f"{PLANT}; ./k"))
    canaries.check("reference")
    assert reference["build"]["ok"] and "planted links to" in reference["execution"]["stdout"], reference

    preset = {"preset": "llm-serve", "command": f"{PLANT} >&2; python3 openai_server.py {{port}}",
              "prompts": ["a b c"], "max_tokens": 4, "stop_grace_s": 1.0, "startup_timeout_s": 60}
    served = smoke_stage.run_reference(with_settings(ctx, smoke_preset=preset, smoke_wait_timeout_s=30))
    canaries.check("preset reference")
    assert served["ok"], served
    assert canaries.changed == {}, "the root side wrote through links a build planted"
    assert_records(ctx, "compile.json", "reference.json", "preset-reference/spec.json")
    assert json.loads((ctx.workspace.artifacts / "reference.json").read_text())["preset"] == "llm-serve"
