"""A run's writable area with a size the filesystem enforces: a sparse ext4 image per run, loop-mounted
while a stage uses it.

``work_area(folder, image, size_mb)`` makes ``image`` the first time (sparse: it takes only what is
written), mounts it at ``folder`` (``loop,nosuid,nodev``) and unmounts it when the stage is done, so
the image is only ever mounted by the one host running the run's current stage (an exclusive lock on
the image guards that on shared storage too). A build that fills it gets ``ENOSPC`` from the
filesystem; the sandbox then reports "workspace limit reached (N MB)", decided from the volume's free
space after the job, never from the build's words.

Loop mounts need root, ``/dev/loop-control``, ``mount`` and ``mkfs.ext4``; ``loop_problem()`` probes
once per process. Without them the area is a plain folder and ``WorkWatch`` measures it during each
job and stops the job over the limit (best effort: between two measurements a build can write
more). ``remove_work`` deletes an area for the retention sweep. Standard library only.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from worker.toolchain.views import is_filesystem_root, state_dir

Kind = Literal["volume", "folder"]
_MOUNT_OPTIONS = "loop,nosuid,nodev,noatime"
_LOCK_WAIT_S = 60.0
_FULL_BYTES = 1 << 20  # less than this left (or no inode left): the volume is full
_active: dict[Path, WorkArea] = {}
_uses: dict[Path, int] = {}
_lock = threading.Lock()


class VolumeError(RuntimeError):
    """The run's work volume cannot be made or mounted; the message says why."""


@dataclass
class WorkArea:
    path: Path
    size_mb: int
    kind: Kind
    note: str = ""  # for a folder: why it is not a volume
    image: Path | None = None
    _lock_fd: int | None = field(default=None, repr=False)

    def describe(self) -> str:
        if self.kind == "volume":
            return f"work volume of {self.size_mb} MB (a loop-mounted ext4 image: the filesystem enforces the size)"
        return (f"work folder with a watched limit of {self.size_mb} MB ({self.note}): its size is measured during "
                "each job, not enforced by the filesystem")


@functools.cache
def loop_problem() -> str:
    """Empty when this worker can loop-mount a work volume, else why not (probed once)."""
    if os.geteuid() != 0:
        return "loop-mounted work volumes need a root worker"
    for tool in ("mount", "umount", "mkfs.ext4"):
        if not shutil.which(tool, path="/usr/sbin:/usr/bin:/sbin:/bin"):
            return f"{tool} is not installed"
    if not os.path.exists("/dev/loop-control"):
        return "this machine has no loop devices (/dev/loop-control)"
    probe = state_dir() / "probe"
    try:
        probe.mkdir(mode=0o700, parents=True, exist_ok=True)
        image = probe / "probe.img"
        image.unlink(missing_ok=True)
        make_image(image, 8)
        _mount(image, probe / "mnt")
        _unmount(probe / "mnt")
        image.unlink()
    except (OSError, VolumeError) as exc:
        return f"a test loop mount failed ({exc})"
    return ""


def make_image(image: Path, size_mb: int) -> None:
    """A sparse file of ``size_mb`` with an empty ext4 filesystem (no journal: it is scratch space)."""
    partial = image.with_name(image.name + ".partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.ftruncate(fd, size_mb << 20)
    finally:
        os.close(fd)
    _tool(["mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-E", "lazy_itable_init=1,nodiscard",
           str(partial)], "make the work volume")
    os.replace(partial, image)


def _tool(command: list[str], what: str) -> None:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VolumeError(f"could not {what}: {exc}") from exc
    if done.returncode != 0:
        raise VolumeError(f"could not {what}: {done.stderr.strip() or done.returncode}")


def _mount(image: Path, folder: Path) -> None:
    folder.mkdir(mode=0o755, exist_ok=True)
    if not is_filesystem_root(folder):
        _tool(["mount", "-t", "ext4", "-o", _MOUNT_OPTIONS, str(image), str(folder)], "mount the work volume")
    with contextlib.suppress(OSError):
        (folder / "lost+found").rmdir()  # mkfs's folder; nothing of the build's


def _unmount(folder: Path) -> None:
    try:
        _tool(["umount", str(folder)], "unmount the work volume")
    except VolumeError:
        _tool(["umount", "--lazy", str(folder)], "unmount the work volume")  # a reader still inside: detach now


def _lock_image(image: Path) -> int:
    """An exclusive lock on the image while it is mounted here (a second host waits, then gives up)."""
    fd = os.open(image, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                raise VolumeError(f"the work volume is in use elsewhere for more than {_LOCK_WAIT_S:g} s") from None
            time.sleep(0.5)


def _open(folder: Path, image: Path, size_mb: int) -> WorkArea:
    problem = loop_problem()
    if problem:
        folder.mkdir(exist_ok=True)
        return WorkArea(folder, size_mb, "folder", problem)
    if not image.is_file():
        make_image(image, size_mb)
    fd = _lock_image(image)
    try:
        _mount(image, folder)
    except VolumeError:
        os.close(fd)
        raise
    actual = image.stat().st_size >> 20
    return WorkArea(folder, actual, "volume", image=image, _lock_fd=fd)


def _close(area: WorkArea) -> None:
    try:
        if area.kind == "volume":
            _unmount(area.path)
    finally:
        if area._lock_fd is not None:
            os.close(area._lock_fd)


@contextlib.contextmanager
def work_area(folder: Path, image: Path, size_mb: int) -> Iterator[WorkArea]:
    """``folder`` usable for the duration of the block; nested and concurrent uses share one mount."""
    folder = folder.absolute()
    with _lock:
        area = _active.get(folder)
        if area is None:
            area = _active[folder] = _open(folder, image, size_mb)
        _uses[folder] = _uses.get(folder, 0) + 1
    try:
        yield area
    finally:
        with _lock:
            _uses[folder] -= 1
            last = _uses[folder] == 0
            if last:
                del _uses[folder], _active[folder]
        if last:
            _close(area)


def active_areas(workspace: Path) -> list[WorkArea]:
    """The open work areas a sandbox over ``workspace`` can write to (inside it, or holding it)."""
    workspace = workspace.absolute()
    with _lock:
        return [area for path, area in _active.items()
                if path == workspace or workspace in path.parents or path in workspace.parents]


def remove_work(folder: Path, image: Path | None) -> None:
    """Delete a work area (the retention sweep; never while a stage uses it): unmount a volume left
    mounted by a worker that died, delete the image, then the folder and what a fallback folder holds."""
    if is_filesystem_root(folder):
        _unmount(folder)
    if image is not None:
        image.unlink(missing_ok=True)
        image.with_name(image.name + ".partial").unlink(missing_ok=True)
    if folder.is_symlink():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)  # fd-based on Linux: links a build planted are removed, never followed


def copy_image(source: Path, destination: Path) -> None:
    """Copy a work volume image keeping it sparse (only its data extents are read and written)."""
    with open(source, "rb") as reading, open(destination, "wb") as writing:
        size = os.fstat(reading.fileno()).st_size
        offset = 0
        while offset < size:
            try:
                start = os.lseek(reading.fileno(), offset, os.SEEK_DATA)
            except OSError:  # no data after offset (ENXIO)
                break
            end = os.lseek(reading.fileno(), start, os.SEEK_HOLE)
            offset = _copy_range(reading.fileno(), writing.fileno(), start, end)
        writing.truncate(size)


def _copy_range(source_fd: int, destination_fd: int, start: int, end: int) -> int:
    """Copy bytes ``start``..``end`` to the same place; ``copy_file_range`` may copy less than asked (the kernel
    splits large or cross-filesystem copies), so it is called until the range is done. Where the copy ended."""
    while start < end:
        copied = os.copy_file_range(source_fd, destination_fd, end - start, start, start)
        if copied == 0:  # the source ended early (it shrank meanwhile): nothing more to copy
            return end
        start += copied
    return end


def used_bytes(folder: Path) -> int:
    """Blocks used under ``folder`` (hard links counted once, links never followed)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for _, _, files, dir_fd in os.fwalk(folder, follow_symlinks=False):
        total += os.stat(dir_fd).st_blocks * 512
        for name in files:
            try:
                info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def is_full(area: WorkArea) -> bool:
    try:
        if area.kind == "folder":
            return used_bytes(area.path) >= area.size_mb << 20
        stats = os.statvfs(area.path)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < _FULL_BYTES or stats.f_favail < 16


class WorkWatch:
    """Watches the work areas during one job: a volume's free space (was it ever full?) and a folder's
    size (over the limit: ``exceeded``, and the sandbox stops the job)."""

    def __init__(self, areas: list[WorkArea]) -> None:
        self.areas = areas
        self.full: WorkArea | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if areas:
            self._thread = threading.Thread(target=self._watch, name="work-watch", daemon=True)
            self._thread.start()

    @property
    def exceeded(self) -> bool:
        return self.full is not None and self.full.kind == "folder"

    def _watch(self) -> None:
        interval = 0.5
        while not self._stop.wait(interval):
            started = time.monotonic()
            self._check()
            interval = max(0.5, 10 * (time.monotonic() - started))  # a big tree is measured less often

    def _check(self) -> None:
        for area in self.areas:
            if self.full is None and is_full(area):
                self.full = area

    def finish(self) -> WorkArea | None:
        """Stop watching; the area that was full (or over its limit) during the job, if any."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._check()
        return self.full
