"""The run's work area: a size-limited volume the filesystem enforces (a watched folder where loop mounts
cannot be had), mounted only while a stage uses it, and removed without a trace by the retention sweep."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from worker.context import Workspace
from worker.toolchain import volume
from worker.toolchain.roots import ToolchainRoot, default_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits
from worker.toolchain.views import is_filesystem_root
from worker.toolchain.work import open_work, work_paths

needs_loop = pytest.mark.skipif(bool(volume.loop_problem()), reason="loop mounts cannot be had here")
FILL = "dd if=/dev/zero of=/workspace/big bs=1M count=200 status=none; echo dd exit $?"


@pytest.fixture
def root() -> ToolchainRoot:
    found = default_root()
    assert found is not None, "no toolchain root: ./dev builds it (scripts/toolchain-root ensure)"
    return found


def loop_devices_of(image: Path) -> str:
    return subprocess.run(["losetup", "--associated", str(image)], capture_output=True, text=True, check=False).stdout


@needs_loop
def test_a_build_writing_past_the_limit_fails_with_the_message_and_cleanup_leaves_nothing(
    tmp_path: Path, root: ToolchainRoot
) -> None:
    run = Workspace(tmp_path / "run")
    folder, image = work_paths(run.root)
    logs: list[str] = []
    with open_work(run, size_mb=64, log=logs.append) as work:
        assert is_filesystem_root(work) and "work volume of 64 MB" in logs[0]
        result = Sandbox(root, work).run(["sh", "-c", f"{FILL}; exit 1"], limits=SandboxLimits(timeout_s=60))
    assert not result.ok and "workspace limit reached (64 MB)" in result.violations, result.violations
    assert "No space left on device" in result.process.output
    assert not is_filesystem_root(folder) and os.listdir(folder) == []  # unmounted: nothing on the host disk
    assert image.stat().st_blocks * 512 < 80 << 20  # sparse: only what was written
    volume.remove_work(folder, image)
    assert not folder.exists() and not image.exists() and loop_devices_of(image) == ""
    assert os.listdir(run.root) == []


@needs_loop
def test_the_volume_keeps_its_files_between_stages_and_nested_opens_share_one_mount(tmp_path: Path) -> None:
    run = Workspace(tmp_path / "run")
    with open_work(run, size_mb=64) as work, open_work(run, size_mb=64) as again:
        assert again == work
        (work / "object.o").write_bytes(b"\x7fELF")
    assert not (work / "object.o").exists()
    with open_work(run, size_mb=64) as work:
        assert (work / "object.o").read_bytes() == b"\x7fELF"


def test_without_loop_mounts_a_watched_folder_stops_a_build_over_the_limit(
    tmp_path: Path, root: ToolchainRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(volume, "loop_problem", lambda: "this machine has no loop devices (/dev/loop-control)")
    logs: list[str] = []
    writer = "for i in $(seq 1 400); do head -c 1048576 /dev/zero > /workspace/f$i; sleep 0.05; done; echo done"
    with open_work(Workspace(tmp_path / "run"), size_mb=8, log=logs.append) as work:
        assert not is_filesystem_root(work) and "watched limit of 8 MB" in logs[0]
        result = Sandbox(root, work).run(["sh", "-c", writer], limits=SandboxLimits(timeout_s=120))
    assert not result.ok and not result.process.stopped and "done" not in result.process.output
    assert result.violations == ["workspace limit reached (8 MB)"]
    assert result.process.duration_s < 60


def test_removing_a_fallback_folder_never_follows_a_link_the_build_planted(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("canary")
    folder = tmp_path / "run" / "work"
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "link").symlink_to(outside)
    (folder / "link-to-file").symlink_to(outside / "keep")
    volume.remove_work(folder, None)
    assert not folder.exists() and (outside / "keep").read_text() == "canary"


@needs_loop
def test_a_work_image_is_copied_sparse_with_its_files(tmp_path: Path) -> None:
    run = Workspace(tmp_path / "run")
    with open_work(run, size_mb=256) as work:
        (work / "kernel.o").write_bytes(b"\x7fELF" * 1000)
    copy = Workspace(tmp_path / "rerun")
    copy.root.mkdir()
    volume.copy_image(work_paths(run.root)[1], work_paths(copy.root)[1])
    image = work_paths(copy.root)[1]
    assert image.stat().st_size == 256 << 20 and image.stat().st_blocks * 512 < 32 << 20
    with open_work(copy, size_mb=256) as work:
        assert (work / "kernel.o").read_bytes() == b"\x7fELF" * 1000


def test_an_image_copy_finishes_each_extent_when_the_kernel_copies_less_than_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """copy_file_range may return short (large or cross-filesystem copies): the rest of the extent is copied too,
    not left as a hole (a re-run's volume would lose the files of its parent's compile)."""
    source = tmp_path / "work.img"
    with open(source, "wb") as image:
        image.truncate(8 << 20)
        image.seek(1 << 20)
        image.write(os.urandom(300_000))
        image.seek(5 << 20)
        image.write(os.urandom(70_000))
    real_copy = os.copy_file_range

    def at_most_4k(src: int, dst: int, count: int, offset_src: int | None = None, offset_dst: int | None = None) -> int:
        return real_copy(src, dst, min(count, 4096), offset_src, offset_dst)

    monkeypatch.setattr(os, "copy_file_range", at_most_4k)
    volume.copy_image(source, tmp_path / "copy.img")
    assert (tmp_path / "copy.img").read_bytes() == source.read_bytes()
