"""A run's work/ folder: the only thing its sandboxes write; its records never visible; what a build
leaves there (links at mount points, links out, FIFOs) never followed by the root side."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from worker.context import Workspace
from worker.toolchain.roots import ToolchainRoot, default_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits
from worker.toolchain.work import (
    BUILD,
    HIP_COPY,
    copy_translated,
    copy_work,
    delete_tree,
    make_dirs,
    open_work,
    remove,
    run_sandbox,
)

LIMITS = SandboxLimits(timeout_s=60, memory_mb=1024)


@pytest.fixture
def root() -> ToolchainRoot:
    found = default_root()
    assert found is not None, "no toolchain root: ./dev builds it (scripts/toolchain-root ensure)"
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "runs" / "3")
    workspace.ensure()
    for tree in (workspace.source, workspace.hip):
        (tree / "src").mkdir(parents=True)
        (tree / "src" / "k.cu").write_text(f"{tree.name} kernel\n")
    (workspace.records / "compile.json").write_text('{"secret": "records"}')
    return workspace


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A host folder and file a build points links at."""
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "file").write_text("host file\n")
    return folder


def sh(sandbox: Sandbox, script: str) -> str:
    done = sandbox.run(["sh", "-c", script], limits=LIMITS)
    return done.process.output


def test_a_run_sandbox_writes_work_reads_the_trees_and_never_sees_the_records(
    workspace: Workspace, root: ToolchainRoot
) -> None:
    with open_work(workspace) as work:
        box = run_sandbox(root, workspace, work)
        output = sh(box, "cat /workspace/source/src/k.cu /workspace/.translated/src/k.cu; ls -a /workspace; "
                         "touch /workspace/source/x /workspace/.translated/x /workspace/made; "
                         "cat /workspace/records/compile.json /workspace/artifacts/compile.json; id -u")
        assert (work / "made").is_file()  # while the work volume is open
    assert "source kernel" in output and "hip kernel" in output and "secret" not in output
    assert output.count("Read-only file system") == 2 and output.splitlines()[-1] == str(box.uid)
    assert not (workspace.source / "x").exists()
    assert not (workspace.hip / "x").exists()
    assert box.inside(workspace.source / "src" / "k.cu") == "/workspace/source/src/k.cu"
    assert box.inside(workspace.hip / "src") == "/workspace/.translated/src"
    assert box.inside(workspace.build / "obj") == "/workspace/build/obj"
    with pytest.raises(ValueError):
        box.inside(workspace.records / "compile.json")


def test_a_runs_own_folder_is_never_a_sandbox_workspace(workspace: Workspace, root: ToolchainRoot) -> None:
    with open_work(workspace):
        with pytest.raises(ValueError, match="a run's folder"):
            Sandbox(root, workspace.root)


def test_links_at_the_mount_points_are_replaced_and_nothing_of_the_host_shows(
    workspace: Workspace, root: ToolchainRoot, host: Path
) -> None:
    with open_work(workspace) as work:
        for name in ("source", ".translated", ".home"):
            os.symlink(host, work / name)
        box = run_sandbox(root, workspace, work)
        output = sh(box, "cat /workspace/source/src/k.cu /workspace/.translated/src/k.cu; ls /workspace/.home")
    assert "source kernel" in output and "hip kernel" in output and "host file" not in output
    assert sorted(p.name for p in host.iterdir()) == ["file"] and (host / "file").read_text() == "host file\n"
    assert os.stat(host).st_uid == os.getuid()  # handed to nobody


def test_the_hand_over_never_follows_a_link_out(workspace: Workspace, root: ToolchainRoot, host: Path) -> None:
    with open_work(workspace) as work:
        (work / "build").mkdir()
        os.symlink(host, work / "build" / "out")
        os.symlink(host / "file", work / "build" / "file")
        (work / "build" / "own.o").write_text("")
        box = run_sandbox(root, workspace, work)
        sh(box, "true")
        if os.geteuid() == 0:
            assert os.stat(work / "build" / "own.o").st_uid == box.uid
            assert os.lstat(work / "build" / "out").st_uid == box.uid  # the link itself
    owner = os.getuid()
    assert os.stat(host).st_uid == owner and os.stat(host / "file").st_uid == owner


def test_folders_are_made_emptied_and_copied_in_the_sandbox_without_following_links(
    workspace: Workspace, root: ToolchainRoot, host: Path
) -> None:
    with open_work(workspace) as work:
        os.symlink(host, work / "build")
        box = run_sandbox(root, workspace, work)
        remove(box, BUILD)  # the link goes, not what it points at
        make_dirs(box, BUILD / "obj" / "src")
        copy_translated(box, fresh=True)
        (work / "hip" / "src" / "k.cu").write_text("changed by a build\n")
        copy_translated(box, fresh=False)  # an existing copy stays
        assert (work / "build" / "obj" / "src").is_dir() and not (work / "build").is_symlink()
        assert (work / "hip" / "src" / "k.cu").read_text() == "changed by a build\n"
    assert (host / "file").read_text() == "host file\n" and sorted(p.name for p in host.iterdir()) == ["file"]
    assert (workspace.hip / "src" / "k.cu").read_text() == "hip kernel\n"
    with pytest.raises(ValueError):
        remove(box, "/etc")


def test_a_parents_work_folder_is_copied_as_it_is_and_never_walked_on_the_host(
    workspace: Workspace, root: ToolchainRoot, host: Path, tmp_path: Path
) -> None:
    with open_work(workspace) as parent:
        (parent / "build" / "bin").mkdir(parents=True)
        (parent / "build" / "bin" / "app").write_text("built\n")
        os.symlink(host / "file", parent / "build" / "planted")
        os.symlink(host, parent / "hip")
        os.mkfifo(parent / "build" / "pipe")
        sh(run_sandbox(root, workspace, parent), "true")  # a sandbox ran there: it is the sandbox user's now
        child = Workspace(tmp_path / "runs" / "4")
        child.ensure()
        with open_work(child) as work:
            copy_work(parent, work, root)
            assert (work / "build" / "bin" / "app").read_text() == "built\n"
            assert os.readlink(work / "build" / "planted") == str(host / "file")  # copied as a link, never followed
            assert (work / "hip").is_symlink()
    assert (host / "file").read_text() == "host file\n" and sorted(p.name for p in host.iterdir()) == ["file"]
    delete_tree(child.root)
    assert not child.root.exists() and (host / "file").is_file()
    assert HIP_COPY.as_posix() == "/workspace/hip"
