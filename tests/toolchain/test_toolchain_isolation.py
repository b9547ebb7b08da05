"""The sandbox's own isolation: no host path inside, limits of each job's own, pass/fail from signals only."""
from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.toolchain.cgroups import cgroup_support
from worker.toolchain.identity import uid_range, workspace_uid
from worker.toolchain.roots import ToolchainRoot, default_root, toolchain_store
from worker.toolchain.sandbox import Sandbox, SandboxLimits
from worker.toolchain.views import launcher_command, state_dir
from worker.toolchain.volume import loop_problem
from worker.toolchain.work import open_work

INSPECT = "cat /proc/1/cmdline /proc/self/mountinfo /proc/self/mounts /proc/self/cgroup; env; ls -l /proc/self/fd"
needs_cgroup = pytest.mark.skipif(cgroup_support().version == "none", reason="no cgroup can be had on this machine")


@pytest.fixture
def root() -> ToolchainRoot:
    found = default_root()
    assert found is not None, "no toolchain root: ./dev builds it (scripts/toolchain-root ensure)"
    return found


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    """A run's work area as the stages open it: a loop-mounted volume on a root worker."""
    with open_work(Workspace(tmp_path / "run"), size_mb=256) as folder:
        (folder / "source").mkdir()
        yield folder


def project_context(run: Path, settings: ProjectSettings, logs: list[str]) -> StageContext:
    workspace = Workspace(run)
    workspace.ensure()
    workspace.hip.mkdir(exist_ok=True)
    workspace.source.mkdir(exist_ok=True)
    return StageContext(run_id=1, project_id=1, workspace=workspace, settings=settings,
                        cache_dir=run / "cache", source_spec={}, log=logs.append)


@pytest.mark.skipif(os.geteuid() != 0 or bool(loop_problem()), reason="hiding host paths needs a root worker")
def test_a_build_sees_no_host_path_in_cmdline_mountinfo_cgroup_or_environment(work: Path, root: ToolchainRoot) -> None:
    box = Sandbox(root, work)
    result = box.run(["sh", "-c", INSPECT], limits=SandboxLimits(timeout_s=60))
    assert result.ok, result.process.output
    output = result.process.output
    assert "bwrap\0--args" in output and "overlay / overlay ro" in output, output
    host_paths = {str(work), str(work.parent), str(toolchain_store()), str(root.path), str(root.path.resolve()),
                  os.environ["MIGRATOR_VAR_DIR"], str(state_dir()), "/var/cache/migrator"}
    assert [path for path in host_paths if path in output] == []
    assert box.notes == []


def test_a_passing_build_that_prints_the_words_of_a_failure_passes(tmp_path: Path) -> None:
    command = ("echo 'curl: (6) Could not resolve host: example.com'; echo 'warning: out of memory, retrying'; "
               "echo 'touch: cannot touch x: Read-only file system'; echo 'fork: retry: Resource temporarily unavailable'")
    ctx = project_context(tmp_path, ProjectSettings(build_mode="project", build_command=command), [])
    result = compile_stage.run(ctx)
    assert result.outcome == "passed", result.summary
    assert result.data["project_build"]["violations"] == []


def test_the_same_words_still_explain_a_build_that_failed(tmp_path: Path) -> None:
    command = "echo 'curl: (6) Could not resolve host: example.com'; exit 6"
    ctx = project_context(tmp_path, ProjectSettings(build_mode="project", build_command=command), [])
    result = compile_stage.run(ctx)
    assert result.outcome == "failed"
    assert "build step failed (exit status 6): the command tried to use the network" in result.summary


FOUR_HOGS = ("for i in 1 2 3 4; do python3 -c 'import time; b = b\"x\" * (400 << 20); time.sleep(8)' & done; wait; "
             "echo all four ran")


@needs_cgroup
def test_four_400_mb_processes_under_a_512_mb_build_limit_are_stopped(tmp_path: Path) -> None:
    settings = ProjectSettings(build_mode="project", build_command=FOUR_HOGS, build_memory_mb=512)
    ctx = project_context(tmp_path, settings, [])
    result = compile_stage.run(ctx)
    assert result.outcome == "failed"
    assert "the job hit its memory limit of 512 MB: the kernel stopped" in result.summary, result.summary


@needs_cgroup
def test_the_memory_limit_covers_the_whole_job_not_each_process(tmp_path: Path, root: ToolchainRoot) -> None:
    (tmp_path / "ws").mkdir()
    box = Sandbox(root, tmp_path / "ws")
    result = box.run(["sh", "-c", FOUR_HOGS], limits=SandboxLimits(timeout_s=60, memory_mb=512))
    assert result.events is not None and result.events.oom_kills >= 1
    assert "all four ran" not in result.process.output or not result.ok


def test_two_concurrent_sandboxes_do_not_share_a_process_limit(tmp_path: Path, root: ToolchainRoot) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = Sandbox(root, tmp_path / "a"), Sandbox(root, tmp_path / "b")
    limits = SandboxLimits(timeout_s=120, processes=200)
    release = threading.Event()
    holding: dict[str, object] = {}

    def hold() -> None:  # 150 live processes in the first sandbox until released
        script = "for i in $(seq 1 150); do sleep 60 & done; touch /workspace/ready; wait"
        holding["result"] = first.run(["sh", "-c", script], limits=limits, should_stop=release.is_set)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "a" / "ready").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (tmp_path / "a" / "ready").exists()
        script = "for i in $(seq 1 120); do sleep 2 & done; wait; echo all started"
        result = second.run(["sh", "-c", script], limits=limits)
    finally:
        release.set()
        thread.join()
    assert result.ok and "all started" in result.process.output, result.violations or result.process.output[-400:]
    assert first.uid != second.uid or cgroup_support().pids is not None


@needs_cgroup
def test_a_jobs_cgroup_is_gone_after_it_ran(tmp_path: Path, root: ToolchainRoot) -> None:
    (tmp_path / "ws").mkdir()
    box = Sandbox(root, tmp_path / "ws")
    support = cgroup_support()
    folders = [f for f in (support.memory, support.pids) if f is not None]
    ours = f"job-{os.getpid()}-"  # other test processes (pytest-xdist workers) make cgroups of their own meanwhile
    before = {c.name for folder in folders for c in folder.iterdir() if c.is_dir() and c.name.startswith(ours)}
    result = box.run(["sh", "-c", "cat /proc/self/cgroup"], limits=SandboxLimits(timeout_s=30))
    after = {c.name for folder in folders for c in folder.iterdir() if c.is_dir() and c.name.startswith(ours)}
    assert result.ok and result.events is not None
    assert after - before == set()


def test_sandboxes_over_one_workspace_share_its_user_id_and_others_get_another(tmp_path: Path) -> None:
    ids = uid_range()
    first, again = workspace_uid(tmp_path / "run-1"), workspace_uid(tmp_path / "run-1")
    others = {workspace_uid(tmp_path / f"run-{n}") for n in range(2, 40)}
    assert first == again and first in ids and len(others) > 30 and others <= set(ids)


def test_two_sandboxes_over_one_workspace_at_once_can_both_write_its_files(tmp_path: Path, root: ToolchainRoot) -> None:
    """A smoke command and its CUDA reference build may run over one workspace at the same time."""
    (tmp_path / "ws" / "out").mkdir(parents=True)
    smoke, reference = Sandbox(root, tmp_path / "ws"), Sandbox(None, tmp_path / "ws")
    assert smoke.run(["sh", "-c", "echo smoke > /workspace/out/shared.txt"], limits=SandboxLimits(30)).ok
    done = reference.run(["sh", "-c", "echo reference >> /workspace/out/shared.txt"], limits=SandboxLimits(30))
    again = smoke.run(["sh", "-c", "echo smoke again >> /workspace/out/shared.txt"], limits=SandboxLimits(30))
    assert done.ok and again.ok, (done.process.output, again.process.output)
    assert (tmp_path / "ws" / "out" / "shared.txt").read_text() == "smoke\nreference\nsmoke again\n"


def test_a_job_whose_cgroup_cannot_be_entered_never_starts(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = [*launcher_command(), "--cgroup", str(tmp_path / "gone" / "cgroup.procs"), "--bwrap", "/bin/sh",
               "--options", "0", "-c", f"touch {marker}"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 125 and not marker.exists()
    assert done.stderr.startswith("migrator-sandbox: could not enter the job's cgroup")


@needs_cgroup
def test_a_caller_running_command_itself_gets_the_jobs_limit_events_from_finish(
    tmp_path: Path, root: ToolchainRoot
) -> None:
    (tmp_path / "ws").mkdir()
    box = Sandbox(root, tmp_path / "ws")
    limits = SandboxLimits(timeout_s=60, processes=50)
    argv = box.command(["sh", "-c", "for i in $(seq 1 200); do sleep 5 & done; wait"], "/workspace", limits)
    subprocess.run(argv, capture_output=True, timeout=60, check=False)
    assert box.finish(argv, limits)[0].startswith("the command hit its limit of 50 processes (")
    assert box.finish(argv, limits) == []  # read once; its groups are gone
