"""The sandbox every command over user content runs in: bubblewrap over the toolchain root, never the host."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.stages import link as link_stage
from worker.toolchain.identity import uid_range
from worker.toolchain.roots import ToolchainRoot, default_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.work import open_work

LIMITS = SandboxLimits(timeout_s=60, memory_mb=2048)


@pytest.fixture
def root() -> ToolchainRoot:
    found = default_root()
    assert found is not None, "no toolchain root: ./dev builds it (scripts/toolchain-root ensure)"
    return found


@pytest.fixture
def box(tmp_path: Path, root: ToolchainRoot) -> Sandbox:
    (tmp_path / "ws" / "source").mkdir(parents=True)
    return Sandbox(root, tmp_path / "ws")


@pytest.mark.parametrize("workspace", [Path("/"), Path.cwd(), Path.cwd().parent, Path("")])
def test_the_filesystem_root_or_a_folder_holding_the_current_one_is_never_a_workspace(workspace: Path) -> None:
    with pytest.raises(ValueError, match="not a folder of its own"):
        Sandbox(None, workspace)


def test_commands_run_over_the_toolchain_root_as_an_unprivileged_user(box: Sandbox, root: ToolchainRoot) -> None:
    result = box.run(["sh", "-c", "id -u; hipcc --version; ls /opt/rocm/include/hipblas/hipblas.h; pwd"], limits=LIMITS)
    assert result.ok, result.process.output
    lines = result.process.output.splitlines()
    assert lines[0] == str(box.uid) and int(lines[0]) in uid_range()
    assert f"HIP version: {root.short_version}" in result.process.output and lines[-1] == "/workspace"


def test_nothing_of_the_host_is_visible(box: Sandbox, tmp_path: Path) -> None:
    secret = Path(tempfile.mkdtemp(dir="/var/tmp")) / "secret_key"
    secret.write_text("HOST-SECRET-93cf\n")
    other_run = tmp_path / "other-run"
    other_run.mkdir()
    (other_run / "a.cu").write_text("ANOTHER-TEAM-7d1\n")
    script = (f"cat /etc/shadow {secret} {other_run}/a.cu; ls /run/postgresql /var/run/redis; "
              "grep -c . /etc/passwd; ls /var/lib/postgresql")
    try:
        result = box.run(["sh", "-c", script], limits=LIMITS)
    finally:
        shutil.rmtree(secret.parent)
    output = result.process.output
    assert "HOST-SECRET" not in output and "ANOTHER-TEAM" not in output and "root:$" not in output
    assert output.count("No such file or directory") >= 5, output


def test_the_database_and_broker_cannot_be_reached(box: Sandbox) -> None:
    code = ("import socket\nfor target in (('127.0.0.1', 5432), ('127.0.0.1', 6379)):\n"
            "    try:\n        socket.create_connection(target, timeout=3); print('CONNECTED', target)\n"
            "    except OSError as exc: print('refused', target, exc)\n"
            "for path in ('/var/run/postgresql/.s.PGSQL.5432', '/run/postgresql/.s.PGSQL.5432'):\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    try:\n        s.connect(path); print('CONNECTED', path)\n"
            "    except OSError as exc: print('refused', path, exc)\n")
    result = box.run(["python3", "-c", code], limits=LIMITS)
    lines = result.process.output.splitlines()
    assert "CONNECTED" not in result.process.output and sum(line.startswith("refused") for line in lines) == 4


def test_it_denies_the_network_with_a_clear_message(box: Sandbox) -> None:
    code = "import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)"
    result = box.run(["python3", "-c", code], limits=LIMITS)
    assert not result.ok
    assert any("tried to use the network" in v for v in result.violations), result.process.output


def test_it_denies_writes_outside_the_workspace_but_allows_them_inside(box: Sandbox) -> None:
    result = box.run(["sh", "-c", "touch /workspace/inside.txt; touch /usr/outside.txt; touch /workspace/source/x"],
                     limits=LIMITS)
    assert (box.workspace / "inside.txt").exists() and not (box.workspace / "source" / "x").exists()
    assert any("tried to write outside its workspace" in v for v in result.violations)


def test_it_kills_a_command_past_its_time_limit(box: Sandbox) -> None:
    result = box.run(["sleep", "30"], limits=SandboxLimits(timeout_s=1))
    assert result.process.timed_out and result.process.duration_s < 10
    assert result.violations == ["the command ran past its time limit of 1 s and was killed"]


def test_it_enforces_the_memory_limit(box: Sandbox) -> None:
    result = box.run(["python3", "-c", "bytearray(1 << 31)"], limits=SandboxLimits(60, memory_mb=512))
    assert any("memory limit of 512 MB" in v for v in result.violations), result.process.output


def test_it_stops_a_fork_bomb_at_the_process_limit(box: Sandbox) -> None:
    script = "for i in $(seq 1 5000); do sleep 20 & done; wait"
    result = box.run(["sh", "-c", script], limits=SandboxLimits(timeout_s=60, processes=200))
    assert not result.ok and result.process.duration_s < 30
    assert any("limit of 200 processes" in v for v in result.violations), result.process.output[-500:]


def test_it_stops_endless_output_at_the_output_limit(box: Sandbox) -> None:
    result = box.run(["sh", "-c", "cat /dev/zero"], limits=SandboxLimits(timeout_s=60, output_bytes=2_000_000))
    assert result.process.output_exceeded and not result.ok
    assert len(result.process.output) < 3_000_000
    assert result.violations == ["the command printed more than 2000000 bytes and was stopped"]


def test_a_stop_request_ends_the_whole_process_tree(box: Sandbox) -> None:
    calls = iter(range(1000))
    result = box.run(["sh", "-c", "sleep 100 & sleep 100"], limits=LIMITS, should_stop=lambda: next(calls) > 3)
    assert result.process.stopped and result.process.duration_s < 10


def test_the_environment_is_scrubbed(box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda")
    monkeypatch.setenv("DATABASE_PASSWORD", "hunter2")
    output = box.run(["env"], limits=LIMITS).process.output
    assert "HIP_PLATFORM=amd" in output and "HOME=/workspace/.home" in output
    assert "CUDA_HOME" not in output and "hunter2" not in output


def test_it_refuses_to_run_without_bubblewrap(box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    from worker.toolchain import sandbox

    sandbox._bubblewrap_problem.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="bubblewrap"):
            box.run(["true"], limits=LIMITS)
    finally:
        sandbox._bubblewrap_problem.cache_clear()


def test_the_cuda_side_sees_only_the_hosts_system_directories(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    result = Sandbox(None, tmp_path / "ws").run(["sh", "-c", "ls /usr/bin/env && cat /etc/shadow; ls /root /var"],
                                                limits=LIMITS)
    assert "/usr/bin/env" in result.process.output and result.process.output.count("No such file") == 3


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
    with open_work(ctx.workspace):  # the build's outputs live on the run's work volume
        assert (ctx.workspace.hip_copy / "k.o").is_file()
    assert "hipcc --offload-arch=gfx90a" in "".join(logs)
    assert not (ctx.workspace.hip / "k.o").exists()  # the translated tree itself is never the build's
    linked = link_stage.run(StageContext(**{**ctx.__dict__, "previous": {"compile": result.data}}))
    assert linked.outcome == "passed"


def test_a_cmake_project_with_the_hip_language_and_hipblas_configures_and_builds(tmp_path: Path) -> None:
    logs: list[str] = []
    ctx = project_context(tmp_path, ProjectSettings(build_mode="project"), logs)
    (ctx.workspace.hip / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(gemm LANGUAGES CXX HIP)\nfind_package(hipblas REQUIRED)\n"
        "add_executable(gemm gemm.hip)\ntarget_link_libraries(gemm PRIVATE roc::hipblas)\n")
    (ctx.workspace.hip / "gemm.hip").write_text(
        "#include <hip/hip_runtime.h>\n#include <hipblas/hipblas.h>\n"
        "int main() { hipblasHandle_t h; return hipblasCreate(&h) == HIPBLAS_STATUS_SUCCESS ? 0 : 1; }\n")
    result = compile_stage.run(ctx)
    assert result.outcome == "passed", "".join(logs)[-3000:]
    with open_work(ctx.workspace):
        assert (ctx.workspace.build / "gemm").is_file()
    assert [step["name"] for step in result.data["project_build"]["steps"]] == ["configure", "build"]


def test_project_mode_fails_clearly_when_the_build_reaches_for_the_network(tmp_path: Path) -> None:
    command = "python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)\""
    ctx = project_context(tmp_path, ProjectSettings(build_mode="project", build_command=command), [])
    result = compile_stage.run(ctx)
    assert result.outcome == "failed"
    assert "tried to use the network, which the sandbox denies" in result.summary


def test_project_build_files_are_owned_by_the_sandbox_user_not_root(tmp_path: Path) -> None:
    ctx = project_context(tmp_path, ProjectSettings(build_mode="project", build_command="touch made-here"), [])
    assert compile_stage.run(ctx).outcome == "passed"
    with open_work(ctx.workspace):
        made = ctx.workspace.hip_copy / "made-here"
        assert made.is_file() and (os.geteuid() != 0 or made.stat().st_uid in uid_range())
