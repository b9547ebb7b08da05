"""The project-build sandbox: no network, nothing writable outside the workspace, limits, clean env."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.stages import link as link_stage
from worker.toolchain.sandbox import SandboxLimits, run_sandboxed, sandbox_status

LIMITS = SandboxLimits(timeout_s=60, memory_mb=2048)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def python(code: str) -> list[str]:
    # The real interpreter, not the venv's link to it: a checkout under /tmp (as CI's clone may be)
    # is hidden by the sandbox's private /tmp. The snippets need only the standard library.
    return [os.path.realpath(sys.executable), "-c", code]


def test_it_uses_bubblewrap_for_a_read_only_system_here() -> None:
    status = sandbox_status()
    assert (status.mechanism, status.isolates_network, status.isolates_writes) == ("bwrap", True, True)


def test_it_denies_the_network_with_a_clear_message(workspace: Path) -> None:
    code = "import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)"
    result = run_sandboxed(python(code), workspace, workspace, LIMITS)
    assert not result.ok
    assert any("tried to use the network" in v for v in result.violations), result.process.output


def test_it_denies_writes_outside_the_workspace_but_allows_them_inside(workspace: Path) -> None:
    # /tmp is a private tmpfs in the sandbox, so aim at a real directory elsewhere
    outside_dir = Path(tempfile.mkdtemp(dir="/var/tmp"))
    outside = outside_dir / "outside.txt"
    result = run_sandboxed(["sh", "-c", f"touch {workspace}/inside.txt; touch {outside}"], workspace, workspace, LIMITS)
    written_outside = outside.exists()
    shutil.rmtree(outside_dir)
    assert (workspace / "inside.txt").exists() and not written_outside
    assert any("tried to write outside its workspace" in v for v in result.violations)


def test_it_kills_a_build_past_its_time_limit(workspace: Path) -> None:
    result = run_sandboxed(["sleep", "30"], workspace, workspace, SandboxLimits(timeout_s=1, memory_mb=512))
    assert result.process.timed_out
    assert result.violations == ["the build ran past its time limit of 1 s and was killed"]


def test_it_enforces_the_memory_limit(workspace: Path) -> None:
    result = run_sandboxed(python("bytearray(1 << 31)"), workspace, workspace, SandboxLimits(60, memory_mb=512))
    assert any("memory limit of 512 MB" in v for v in result.violations), result.process.output


def test_it_scrubs_cuda_variables_and_secrets_and_sets_the_hip_platform(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda")
    monkeypatch.setenv("NVCC_APPEND_FLAGS", "-G")
    monkeypatch.setenv("DATABASE_PASSWORD", "hunter2")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/local/cuda/lib64:/opt/other/lib")
    output = run_sandboxed(["env"], workspace, workspace, LIMITS).process.output
    assert "HIP_PLATFORM=amd" in output and "LD_LIBRARY_PATH=/opt/other/lib\n" in output
    assert "CUDA_HOME" not in output and "NVCC_" not in output and "hunter2" not in output


MAKEFILE = "k.o: k.hip\n\t$(HIPCC) $(HIPFLAGS) -c k.hip -o k.o\n"


def project_context(root: Path, settings: ProjectSettings, logs: list[str]) -> StageContext:
    workspace = Workspace(root)
    workspace.ensure()
    workspace.hip.mkdir(exist_ok=True)
    workspace.source.mkdir(exist_ok=True)
    return StageContext(run_id=1, project_id=1, workspace=workspace, settings=settings,
                        cache_dir=root / "cache", source_spec={}, log=logs.append)


def test_project_mode_builds_with_the_projects_makefile_in_the_sandbox(tmp_path: Path) -> None:
    logs: list[str] = []
    ctx = project_context(tmp_path, ProjectSettings(build_mode="project"), logs)
    (ctx.workspace.hip / "Makefile").write_text(MAKEFILE)
    (ctx.workspace.hip / "k.hip").write_text("#include <hip/hip_runtime.h>\n__global__ void k(int* x) { *x = 1; }\n")
    result = compile_stage.run(ctx)
    assert result.outcome == "passed", "".join(logs)
    assert result.data["project_build"]["sandbox"] == "bwrap"
    assert (ctx.workspace.hip / "k.o").is_file() and "hipcc --offload-arch=gfx90a" in "".join(logs)
    linked = link_stage.run(StageContext(**{**ctx.__dict__, "previous": {"compile": result.data}}))
    assert linked.outcome == "passed"


def test_project_mode_fails_clearly_when_the_build_reaches_for_the_network(tmp_path: Path) -> None:
    command = "python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)\""
    ctx = project_context(tmp_path, ProjectSettings(build_mode="project", build_command=command), [])
    result = compile_stage.run(ctx)
    assert result.outcome == "failed"
    assert "tried to use the network, which the sandbox denies" in result.summary
