"""Every sandboxed job in cgroups of its own: the memory and the process count of the whole job tree are
limited together, and the kernel's own counters say afterwards whether a limit was hit.

Where the groups come from, first found wins:

- ``MIGRATOR_CGROUP_ROOT``: a cgroup v2 folder delegated to the worker (for example the ``jobs`` child
  of a systemd unit with ``Delegate=yes``, or of a ``systemd-run --scope -p Delegate=yes`` scope);
  the worker enables ``memory`` and ``pids`` for its children and makes one child per job;
- cgroup v2 by itself: when the worker's own group sits in a delegated parent that hands ``memory``
  and ``pids`` to its children (systemd's ``DelegateSubgroup=`` layout), job groups go beside it;
- cgroup v1: writable ``memory`` and ``pids`` hierarchies; job groups go under the worker's own group
  in each (so whatever limits the worker also limits its jobs).

Per job: ``memory.max`` / ``memory.limit_in_bytes`` (swap off where the kernel accounts for it),
``pids.max``; afterwards ``memory.events`` / ``memory.oom_control`` give the OOM kills and
``pids.events`` the refused forks. Where none can be had, ``CgroupSupport.problem`` says why and
the sandbox keeps per-process limits only (and says so on the runners page and in the stage log).
"""
from __future__ import annotations

import errno
import functools
import itertools
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Version = Literal["cgroup2", "cgroup1", "none"]
JOBS_FOLDER = "migrator-jobs"
_STALE_AFTER_S = 120.0
_SWEEP_EVERY_S = 60.0
_counter = itertools.count(1)
_swept = {"at": 0.0}
_sweep_lock = threading.Lock()


@dataclass(frozen=True)
class CgroupSupport:
    version: Version
    memory: Path | None = None  # the folder job groups are made in, for the memory controller
    pids: Path | None = None  # the same for the pids controller (the same folder on cgroup v2)
    problem: str = ""  # what is missing; "" when memory and processes are both limited per job

    def describe(self) -> str:
        if self.version == "none":
            return f"no cgroup per job ({self.problem}): per-process limits only"
        controllers = " and ".join(name for name, path in (("memory", self.memory), ("pids", self.pids)) if path)
        text = f"a {self.version} group per job ({controllers})"
        return f"{text}; {self.problem}" if self.problem else text


@dataclass(frozen=True)
class LimitEvents:
    """What the kernel counted for one job group."""

    oom_kills: int = 0  # processes the kernel killed at the memory limit
    refused_forks: int = 0  # forks refused at the process limit
    memory_peak_bytes: int | None = None


@dataclass(frozen=True)
class _Mount:
    point: Path
    root: str
    fstype: str
    options: frozenset[str]


def _mounts() -> list[_Mount]:
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        dash = fields.index("-")
        fstype, super_options = fields[dash + 1], fields[dash + 3] if len(fields) > dash + 3 else ""
        if fstype in ("cgroup", "cgroup2"):
            point = fields[4].replace("\\040", " ")
            found.append(_Mount(Path(point), fields[3], fstype, frozenset(super_options.split(","))))
    return found


def _own_groups() -> dict[str, str]:
    """This process's group per hierarchy: ``""`` for cgroup v2, else the controller name."""
    groups: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            groups[name] = path
    return groups


def _folder(mount: _Mount, group: str) -> Path | None:
    if group != mount.root and not group.startswith(mount.root.rstrip("/") + "/"):
        return None  # this process's group is outside what this mount shows
    return mount.point / group[len(mount.root):].lstrip("/")


def _writable_jobs_folder(folder: Path) -> Path | None:
    jobs = folder / JOBS_FOLDER
    try:
        jobs.mkdir(exist_ok=True)
    except OSError:
        return None
    return jobs if os.access(jobs, os.W_OK) else None


def _v2_folder(folder: Path) -> tuple[Path | None, str]:
    """``folder`` made ready to hold job groups with memory and pids, or why it cannot."""
    try:
        available = set((folder / "cgroup.controllers").read_text().split())
    except OSError as exc:
        return None, f"{folder.name or '/'} is not a cgroup v2 folder ({exc.strerror})"
    missing = {"memory", "pids"} - available
    if missing:
        return None, f"cgroup v2 offers no {' or '.join(sorted(missing))} controller here"
    try:
        enabled = set((folder / "cgroup.subtree_control").read_text().split())
        if {"memory", "pids"} - enabled:
            (folder / "cgroup.subtree_control").write_text("+memory +pids")
    except OSError as exc:
        return None, f"cannot hand memory and pids to job groups in cgroup v2 ({exc.strerror})"
    return folder, ""


def _explicit_v2(root: str) -> tuple[CgroupSupport | None, str]:
    folder, problem = _v2_folder(Path(root))
    if folder is None:
        return None, f"MIGRATOR_CGROUP_ROOT: {problem}"
    return CgroupSupport("cgroup2", folder, folder), ""


def _auto_v2(mounts: list[_Mount], groups: dict[str, str]) -> CgroupSupport | None:
    unified = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if unified is None or "" not in groups:
        return None
    own = _folder(unified, groups[""])
    if own is None or own == unified.point:
        return None
    parent = own.parent
    try:
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
    except OSError:
        return None
    if {"memory", "pids"} - enabled or not os.access(parent, os.W_OK):
        return None
    jobs = _writable_jobs_folder(parent)
    folder, _ = _v2_folder(jobs) if jobs else (None, "")
    return CgroupSupport("cgroup2", folder, folder) if folder else None


def _v1(mounts: list[_Mount], groups: dict[str, str]) -> CgroupSupport:
    found: dict[str, Path | None] = {"memory": None, "pids": None}
    for controller in found:
        mount = next((m for m in mounts if m.fstype == "cgroup" and controller in m.options), None)
        own = _folder(mount, groups.get(controller, "/")) if mount else None
        found[controller] = _writable_jobs_folder(own) if own else None
    if not any(found.values()):
        return CgroupSupport("none", problem="no writable cgroup v1 memory or pids hierarchy and no delegated cgroup v2")
    missing = [name for name, path in found.items() if path is None]
    problem = f"no writable cgroup v1 {missing[0]} hierarchy" if missing else ""
    return CgroupSupport("cgroup1", found["memory"], found["pids"], problem)


@functools.cache
def cgroup_support() -> CgroupSupport:
    """What this worker can have, found once per process."""
    try:
        mounts, groups = _mounts(), _own_groups()
    except (OSError, ValueError) as exc:
        return CgroupSupport("none", problem=f"cannot read this process's cgroups ({exc})")
    explicit = os.environ.get("MIGRATOR_CGROUP_ROOT", "")
    note = ""
    if explicit:
        support, note = _explicit_v2(explicit)
        if support is not None:
            return support
    support = _auto_v2(mounts, groups) or _v1(mounts, groups)
    if note:
        problem = f"{note}; {support.problem}" if support.problem else note
        return CgroupSupport(support.version, support.memory, support.pids, problem)
    return support


class JobGroup:
    """The groups of one job: made with its limits, joined by the launcher, read and removed afterwards."""

    def __init__(self, support: CgroupSupport, memory_bytes: int, processes: int) -> None:
        self.support = support
        self.name = f"job-{os.getpid()}-{next(_counter)}-{secrets.token_hex(3)}"
        self.folders: list[Path] = []
        self.memory: Path | None = None
        self.pids: Path | None = None
        _sweep_stale(support)
        try:
            self._make(memory_bytes, processes)
        except OSError:
            self.remove()
            raise

    def _make(self, memory_bytes: int, processes: int) -> None:
        if self.support.version == "cgroup2":
            assert self.support.memory is not None
            folder = self._mkdir(self.support.memory)
            self.memory = self.pids = folder
            if memory_bytes:
                _write(folder / "memory.max", memory_bytes)
                _write_if_present(folder / "memory.swap.max", 0)
            _write_if_present(folder / "memory.oom.group", 1)  # an OOM kill takes the whole job
            _write(folder / "pids.max", processes or "max")
            return
        if self.support.memory is not None:
            self.memory = self._mkdir(self.support.memory)
            if memory_bytes:
                _write(self.memory / "memory.limit_in_bytes", memory_bytes)
                _write_if_present(self.memory / "memory.memsw.limit_in_bytes", memory_bytes)
        if self.support.pids is not None:
            self.pids = self._mkdir(self.support.pids)
            _write(self.pids / "pids.max", processes or "max")

    def _mkdir(self, parent: Path) -> Path:
        folder = parent / self.name
        folder.mkdir()
        self.folders.append(folder)
        return folder

    @property
    def procs_files(self) -> list[str]:
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def events(self) -> LimitEvents:
        oom = refused = 0
        peak: int | None = None
        if self.memory is not None:
            counters = "memory.events" if self.support.version == "cgroup2" else "memory.oom_control"
            oom = _counter_value(self.memory / counters, "oom_kill")
            peak_file = "memory.peak" if self.support.version == "cgroup2" else "memory.max_usage_in_bytes"
            peak = _read_int(self.memory / peak_file)
        if self.pids is not None:
            refused = _counter_value(self.pids / "pids.events", "max")
        return LimitEvents(oom, refused, peak)

    def remove(self) -> bool:
        """Remove the groups (a group still holding exiting processes is retried for a moment, then
        left to the stale sweep). True when all are gone."""
        left = []
        for folder in self.folders:
            if not _rmdir(folder, attempts=40):
                left.append(folder)
        self.folders = left
        return not left


def _rmdir(folder: Path, attempts: int) -> bool:
    for _ in range(attempts):
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return False
            time.sleep(0.025)
    return False


def _sweep_stale(support: CgroupSupport) -> None:
    """Remove empty job groups left by commands whose caller never came back for them (or a worker
    that died): at most once a minute per process, only groups older than two minutes."""
    with _sweep_lock:
        if time.monotonic() - _swept["at"] < _SWEEP_EVERY_S:
            return
        _swept["at"] = time.monotonic()
    for parent in {p for p in (support.memory, support.pids) if p is not None}:
        try:
            children = [child for child in parent.iterdir() if child.is_dir() and child.name.startswith("job-")]
        except OSError:
            continue
        for child in children:
            try:
                old = time.time() - child.stat().st_mtime > _STALE_AFTER_S
                empty = not (child / "cgroup.procs").read_text().strip()
            except OSError:
                continue
            if old and empty:
                _rmdir(child, attempts=1)


def _write(path: Path, value: object) -> None:
    path.write_text(str(value))


def _write_if_present(path: Path, value: object) -> None:
    if path.exists():
        try:
            _write(path, value)
        except OSError:
            pass  # an optional knob this kernel refuses (swap accounting off): the main limit still holds


def _counter_value(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None
