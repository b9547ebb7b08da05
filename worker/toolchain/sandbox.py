"""Every command over user content runs here: bubblewrap over a toolchain root, never over the host.

What the command sees: the toolchain root read-only as ``/``; its workspace read-write at
``/workspace`` (for a run, the run's ``work/`` folder: ``worker/toolchain/work.py``); the folders given
as ``binds`` read-only at their sandbox paths (a run's ``source/`` at ``/workspace/source`` and its
translated tree at ``/workspace/.translated``); where a stage asks for them, files and folders of the
product's own code read-only under ``/mnt/migrator`` (``tools``: PyTorch's pure-Python hipify, say); a
fresh ``/tmp``; ``/proc``; a minimal ``/dev`` (plus ``/dev/kfd`` and ``/dev/dri`` and a masked ``/sys``
for smoke runs on a ROCm runner). Nothing else of the host: no host ``/etc``, no database, broker or
web-server sockets, no var dir, no run's records, no other run, and no host path: bubblewrap gets its options through ``--args`` (so PID 1's command line
names none) and, on a root worker, read-only folders are shown through overlays and the work area
is a volume of its own (``views.py``), so ``/proc/self/mountinfo`` names none either.

Who it runs as: an unprivileged user id of the workspace's own (``identity.py``). When the worker is
root, bubblewrap sets up the namespaces and ``setpriv`` (from the root) drops to that id before the
command starts; the workspace is handed to it first, through directory descriptors that never follow a
link (``_hand_over``). A non-root worker runs
bubblewrap in a user namespace instead.

Limits: wall time, output size and the stop flag by the runner (which kills the process group; the
PID namespace and ``--die-with-parent`` take every descendant with it, also when the worker itself is
killed); memory and number of processes of the whole job by a cgroup of its own where one can be had
(``cgroups.py``); address space, CPU time and file size per process by rlimits (``launch.py`` sets
them, joins the cgroup, then becomes bubblewrap). No network, a scrubbed environment.

Pass or fail comes from what the kernel and the runner saw: exit status, signals (SIGXCPU, SIGXFSZ),
the time and output limits, the cgroup's OOM kills and refused forks, a full work volume. Words in
the output only add an explanation to a failure already decided. When bubblewrap cannot run, nothing
runs: ``SandboxUnavailable`` names what is missing.
"""
from __future__ import annotations

import errno
import functools
import glob
import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from worker.toolchain.cgroups import CgroupSupport, JobGroup, LimitEvents, cgroup_support
from worker.toolchain.detect import hip_environment
from worker.toolchain.identity import uid_range, workspace_uid
from worker.toolchain.roots import ToolchainRoot
from worker.toolchain.runner import ProcessResult, run_process
from worker.toolchain.views import is_filesystem_root, launcher_command, overlay_problem, stage_dir
from worker.toolchain.volume import WorkArea, WorkWatch, active_areas, loop_problem

Mechanism = Literal["bwrap", "none"]
MOUNT = PurePosixPath("/workspace")
TOOLS = PurePosixPath("/mnt/migrator")  # where ``Sandbox(tools=...)`` appear inside
PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

_WRITE_DENIED = ("Read-only file system",)
_NETWORK_DENIED = ("Network is unreachable", "Temporary failure in name resolution", "Could not resolve host",
                   "Name or service not known", "No address associated with hostname")
_OUT_OF_MEMORY = ("Cannot allocate memory", "MemoryError", "std::bad_alloc", "out of memory", "LLVM ERROR: out of memory")
_TOO_MANY_PROCESSES = ("Resource temporarily unavailable", "fork: retry", "Cannot fork")
_GPU_DEVICES = ("/dev/kfd", "/dev/dri")
_SIGXCPU, _SIGXFSZ = 24, 25
# Under /sys (bound for GPU runs): the cgroup tree and the block devices (a loop device names its
# backing file, a host path) are covered; the GPU topology the ROCm runtime reads stays.
_SYS_MASKED = ("/sys/fs/cgroup", "/sys/devices/virtual/block")


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot run here; the message says what is missing. Nothing runs unsandboxed."""


@dataclass(frozen=True)
class SandboxLimits:
    timeout_s: float
    memory_mb: int = 8192  # the whole job's memory (its cgroup) and each process's address space; 0: none
    cpu_seconds: int = 0  # 0: derived from the time limit and the core count
    file_size_mb: int = 8192
    processes: int = 1024  # the whole job's (its cgroup); without a pids cgroup, the sandbox user's
    output_bytes: int = 20_000_000
    address_space_mb: int | None = None  # each process's; None: memory_mb (the HIP runtime maps more than it uses)


@dataclass
class SandboxResult:
    process: ProcessResult
    violations: list[str]  # clear messages: limits hit (decided by signals), explained by the output where it can
    mechanism: Mechanism = "bwrap"
    command: list[str] = field(default_factory=list)  # what ran inside, as given
    events: LimitEvents | None = None  # the job's cgroup counters; None without a cgroup

    @property
    def ok(self) -> bool:
        return self.process.ok and not self.violations


@dataclass
class _Job:
    group: JobGroup | None
    events: LimitEvents | None = None

    def finish(self) -> LimitEvents | None:
        if self.group is not None and self.events is None:
            self.events = self.group.events()
            self.group.remove()
        return self.events


@dataclass(frozen=True)
class _Bind:
    source: Path
    dest: str
    writable: bool
    view: str = ""  # the overlay view's name under the stage folder; "": bound as it is
    inner: str = ""  # a file's name inside its folder's view (files are shown through their folder's view)


def sandbox_uid() -> int:
    """The first id of the sandbox users' range (``MIGRATOR_SANDBOX_UID``); ``Sandbox.uid`` is the one in use."""
    return uid_range().start


def own_folder(workspace: Path) -> Path:
    """``workspace`` if it can be handed to the sandbox user: a root worker gives it away recursively, so
    the filesystem root or a folder holding this process's current one (a common folder computed from a
    stray relative path, say) would give the host away; a run's own folder (with ``records/`` and
    ``work/``) would give the sandbox the records. Raises ``ValueError`` for those."""
    here = Path.cwd().resolve()
    if workspace == Path(workspace.anchor) or workspace == here or workspace in here.parents:
        raise ValueError(f"{workspace} is not a folder of its own; refusing it as a sandbox workspace")
    if all(_is_real_dir(workspace / name) for name in ("records", "work")):
        raise ValueError(f"{workspace} is a run's folder; its sandbox workspace is its work/ folder")
    return workspace


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class Sandbox:
    """One workspace over one toolchain root; ``run`` as many commands in it as needed.

    ``root=None`` is for the CUDA reference side only: the host's ``/usr`` and ``/opt`` (where a CUDA
    toolkit lives) read-only and nothing else of the host, the same limits and the same kind of user.
    """

    def __init__(
        self, root: ToolchainRoot | None, workspace: Path, *, gpu_devices: bool = False,
        read_only: Sequence[str] = ("source",), environment: Mapping[str, str] | None = None,
        tools: Mapping[str, Path] | None = None, binds: Mapping[str, Path] | None = None,
    ) -> None:
        """``read_only``: folders of the workspace itself bound read-only over themselves (real folders only,
        never a link). ``binds``: sandbox path -> host folder, bound read-only; a path under ``/workspace``
        names one entry of it (``/workspace/source``), anything else lies on the sandbox's own file system
        (``/tmp/...``). ``tools``: name -> a file or folder of the product's own code, read-only at
        ``/mnt/migrator/<name>``."""
        self.root = root
        self.given = Path(os.path.abspath(workspace))
        self.workspace = own_folder(workspace.resolve())
        self.gpu_devices = gpu_devices
        self.read_only = [self.workspace / name for name in read_only if _is_real_dir(self.workspace / name)]
        self.binds = {str(PurePosixPath(inside)): Path(host).resolve() for inside, host in (binds or {}).items()}
        self._binds_given = {str(PurePosixPath(inside)): Path(os.path.abspath(host)) for inside, host in
                             (binds or {}).items()}
        for inside in self.binds:
            _check_bind_path(inside)
        self.tools = {_tool_name(name): Path(path).resolve() for name, path in (tools or {}).items()}
        self.environment = dict(environment or {})
        self._prepared = False
        self._lock = threading.Lock()
        self._binds: list[_Bind] = []
        self._notes: list[str] = []
        self._jobs: dict[tuple[str, ...], _Job] = {}
        self._told = False

    @property
    def uid(self) -> int:
        """The user id commands run as: this workspace's own (``identity.py``)."""
        return workspace_uid(self.workspace)

    @property
    def notes(self) -> list[str]:
        """What this sandbox cannot hide or limit here (fallbacks), for the stage log."""
        self._prepare()
        return [*isolation_notes(), *self._notes]

    def with_binds(self, binds: Mapping[str, Path]) -> Sandbox:
        """The same sandbox with more read-only folders (inputs the root side wrote where no sandbox writes)."""
        extended = Sandbox(self.root, self.workspace, gpu_devices=self.gpu_devices, read_only=(),
                           environment=self.environment, binds={**self._binds_given, **binds}, tools=self.tools)
        extended.read_only = list(self.read_only)
        extended.given = self.given
        return extended

    def inside(self, host_path: Path | str) -> str:
        """Where a workspace path (or a path in one of the binds) appears inside the sandbox.

        Worked out from the names alone: a path of the workspace is never resolved on the host, where a
        build may have made any part of it a link."""
        path = Path(os.path.abspath(host_path))
        for inside in sorted(self.binds, key=lambda name: -len(str(self.binds[name]))):
            relative = _relative_to(path, self.binds[inside]) or _relative_to(path, self._binds_given[inside])
            if relative is not None:
                return inside if relative == "." else f"{inside}/{relative}"
        relative = _relative_to(path, self.workspace) or _relative_to(path, self.given)
        if relative is None:
            raise ValueError(f"{host_path} is not in the sandbox's workspace")
        return str(MOUNT / relative) if relative != "." else str(MOUNT)

    def outside(self, inside_path: str) -> Path:
        """The host path of a sandbox path in the workspace or one of the binds."""
        path = PurePosixPath(inside_path)
        for inside, host in sorted(self.binds.items(), key=lambda item: -len(item[0])):
            if path == PurePosixPath(inside) or PurePosixPath(inside) in path.parents:
                return host / path.relative_to(inside)
        relative = path.relative_to(MOUNT)
        return self.workspace / relative

    def run(
        self, argv: Sequence[str], cwd: str = str(MOUNT), limits: SandboxLimits | None = None, *,
        env: Mapping[str, str] | None = None, on_line: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] = lambda: False, stdin: bytes | None = None,
    ) -> SandboxResult:
        """Run ``argv`` inside; ``stdin``: bytes for its standard input (data only, never a file of the host)."""
        limits = limits or SandboxLimits(timeout_s=600)
        wrapped, job = self._wrap(list(argv), cwd, limits, env)
        if on_line is not None and not self._told:
            self._told = True
            for note in self._notes:  # this sandbox's own fallbacks, once, where the caller logs
                on_line(f"[sandbox] {note}\n")
        watch = WorkWatch(active_areas(self.workspace))
        try:
            process = run_process(wrapped, self.workspace, {"PATH": PATH, "LANG": "C.UTF-8"}, limits.timeout_s,
                                  on_line, limits.output_bytes, lambda: watch.exceeded or should_stop(), stdin)
        finally:
            full = watch.finish()
            events = job.finish()
        if full is not None and process.stopped and watch.exceeded:
            process.stopped = False  # the watch stopped it, not the caller
        return SandboxResult(process, find_violations(process, limits, events, full), "bwrap", list(argv), events)

    def command(
        self, argv: list[str], cwd: str, limits: SandboxLimits, env: Mapping[str, str] | None = None
    ) -> list[str]:
        """The full command line (launcher, bubblewrap and, as root, setpriv around ``argv``) for a caller
        that runs it itself; afterwards ``finish(command)`` reads the job's limit events and removes its
        cgroup. Raises ``SandboxUnavailable`` when bubblewrap cannot run here."""
        wrapped, job = self._wrap(argv, cwd, limits, env)
        with self._lock:
            self._jobs[tuple(wrapped)] = job
        return wrapped

    def finish(self, command: Sequence[str], limits: SandboxLimits) -> list[str]:
        """The limits the job of ``command`` (from ``command()``) hit, as messages; its cgroup is removed."""
        with self._lock:
            job = self._jobs.pop(tuple(command), None)
        events = job.finish() if job is not None else None
        return _limit_violations(limits, events)

    def _wrap(
        self, argv: list[str], cwd: str, limits: SandboxLimits, env: Mapping[str, str] | None
    ) -> tuple[list[str], _Job]:
        require_bubblewrap(self.root)
        self._prepare()
        support = cgroup_support()
        group = JobGroup(support, limits.memory_mb << 20, limits.processes) if support.version != "none" else None
        as_root = os.geteuid() == 0
        options = self._options(cwd, env, as_root)
        launch = [arg for procs in (group.procs_files if group else []) for arg in ("--cgroup", procs)]
        launch += [arg for limit in _rlimits(limits, pids_limited=group is not None and group.pids is not None)
                   for arg in ("--rlimit", limit)]
        views = [bind for bind in self._binds if bind.view]
        if views:
            launch += ["--stage", str(stage_dir())]
            launch += [arg for bind in views for arg in ("--view", str(bind.source), bind.view)]
        launch += ["--bwrap", shutil.which("bwrap") or "bwrap", "--options", str(len(options))]
        drop = (["/usr/bin/setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                 "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"] if as_root else [])
        return [*launcher_command(), *launch, *options, "--", *drop, *argv], _Job(group)

    def _options(self, cwd: str, env: Mapping[str, str] | None, as_root: bool) -> list[str]:
        options: list[str] = []
        if self.root is None:
            options += _host_system_binds()
        tools = [bind for bind in self._binds if PurePosixPath(bind.dest).is_relative_to(TOOLS)]
        for bind in self._binds:
            if bind in tools:
                continue
            options += ["--bind" if bind.writable else "--ro-bind", _bind_source(bind), bind.dest]
            if bind.dest == "/":
                options += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp",
                            "--perms", "1777", "--tmpfs", "/dev/shm"]
        if tools:
            options += _tool_binds(tools)
        if self.gpu_devices:
            options += _gpu_binds()
        options += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                    "--hostname", "sandbox", "--die-with-parent", "--new-session", "--chdir", cwd, "--clearenv"]
        if not as_root:
            options += ["--unshare-user", "--uid", str(self.uid), "--gid", str(self.uid)]
        for name, value in self._environment(env).items():
            options += ["--setenv", name, value]
        return options

    def writable_dir(self, path: Path) -> Path:
        """Make a workspace folder (and its parents) the sandboxed command may write into: made by the
        sandbox user inside the sandbox, so no link a build planted is ever followed on the host."""
        done = self.run(["mkdir", "-p", "--", self.inside(path)], limits=SandboxLimits(timeout_s=60, memory_mb=1024))
        if not done.process.ok:
            raise OSError(errno.EIO, f"cannot make {self.inside(path)}: {done.process.output.strip()[-300:]}")
        return path

    def _environment(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        env = {"PATH": PATH, "HOME": str(MOUNT / ".home"), "TMPDIR": "/tmp", "USER": "builder", "TERM": "dumb",
               **hip_environment(), **self.environment}
        env.update(extra or {})
        return env

    def _prepare(self) -> None:
        """Before each command: the mount points of the binds are real folders. Once per sandbox: plan the
        binds and (a root worker only) hand the workspace to the sandbox user."""
        with self._lock:
            workspace = os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                names = [PurePosixPath(inside).name for inside in self.binds if PurePosixPath(inside).parent == MOUNT]
                for name in (".home", *names):
                    _real_folder_at(workspace, name)
                if not self._prepared and os.geteuid() == 0:
                    _hand_over(workspace, self.uid, {path.name for path in self.read_only})
            finally:
                os.close(workspace)
            if self._prepared:
                return
            extra = [(host, inside) for inside, host in self.binds.items()]
            extra += [(host, str(TOOLS / name)) for name, host in sorted(self.tools.items())]
            self._binds, notes = _plan_binds(self.root, self.workspace, self.read_only, extra)
            self._notes += notes
            self._prepared = True


def _plan_binds(
    root: ToolchainRoot | None, workspace: Path, read_only: list[Path], extra: Sequence[tuple[Path, str]] = (),
) -> tuple[list[_Bind], list[str]]:
    """The sandbox's mounts, each either a filesystem root as it is or an overlay view; what stays visible.

    ``extra``: (host file or folder, sandbox path) bound read-only, in order after the workspace; a file is
    shown through a view of its folder."""
    binds: list[_Bind] = []
    notes: list[str] = []
    wanted = [] if root is None else [(root.path.resolve(), "/", False)]
    wanted += [(workspace, str(MOUNT), True)]
    wanted += [(path, str(MOUNT / path.relative_to(workspace)), False) for path in read_only]
    wanted += [(host, inside, False) for host, inside in extra]
    for index, (source, dest, writable) in enumerate(wanted):
        what = "the toolchain root" if dest == "/" else f"{dest}"
        folder, inner = (source, "") if source.is_dir() else (source.parent, source.name)
        if not inner and is_filesystem_root(source):
            binds.append(_Bind(source, dest, writable))
        elif writable:
            binds.append(_Bind(source, dest, writable))
            notes.append(f"the host path of {what} shows in /proc/self/mountinfo (it is not a work volume)")
        elif problem := overlay_problem(folder):
            binds.append(_Bind(source, dest, writable))
            notes.append(f"the host path of {what} shows in /proc/self/mountinfo ({problem})")
        else:
            binds.append(_Bind(folder, dest, writable, view=str(index), inner=inner))
    return binds, notes


def _bind_source(bind: _Bind) -> str:
    """What bubblewrap binds for ``bind``: the overlay view (or the file in it), else the host path."""
    if not bind.view:
        return str(bind.source)
    view = stage_dir() / bind.view
    return str(view / bind.inner) if bind.inner else str(view)


def _relative_to(path: Path, base: Path) -> str | None:
    try:
        relative = path.relative_to(base)
    except ValueError:
        return None
    return relative.as_posix()


def _check_bind_path(inside: str) -> None:
    path = PurePosixPath(inside)
    if not path.is_absolute() or ".." in path.parts or path == MOUNT or path == PurePosixPath("/"):
        raise ValueError(f"{inside} cannot take a read-only folder")
    if MOUNT in path.parents and path.parent != MOUNT:
        raise ValueError(f"{inside}: a folder bound into the workspace sits at its top (/workspace/<name>)")


def _real_folder_at(directory: int, name: str) -> None:
    """``name`` in the folder ``directory`` is a real folder: whatever a build left there (a link, a file)
    is removed first, by descriptor, never followed (bubblewrap mounts over it, and refuses a link)."""
    try:
        os.mkdir(name, 0o755, dir_fd=directory)
        return
    except FileExistsError:
        pass
    if stat.S_ISDIR(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode):
        return
    os.unlink(name, dir_fd=directory)
    os.mkdir(name, 0o755, dir_fd=directory)


def _tool_name(name: str) -> str:
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or ".." in parts:
        raise ValueError(f"{name!r} is not a relative name under {TOOLS}")
    return "/".join(parts)


def _tool_binds(tools: Sequence[_Bind]) -> list[str]:
    """The product's own code under TOOLS, read-only. A read-only root cannot take new mount points, so a
    fresh tmpfs goes over ``/mnt`` (Debian's and Ubuntu's base layout always has it), the files and folders
    are bound in it, and the tmpfs is then made read-only too: nothing can be added beside them."""
    binds = ["--perms", "0755", "--tmpfs", "/mnt"]
    folders = sorted({str(parent) for bind in tools for parent in PurePosixPath(bind.dest).parents
                      if parent not in (PurePosixPath("/"), PurePosixPath("/mnt"))})
    for folder in folders:  # bubblewrap would make missing parents private to root (0700)
        binds += ["--perms", "0755", "--dir", folder]
    for bind in sorted(tools, key=lambda b: b.dest):
        binds += ["--ro-bind", _bind_source(bind), bind.dest]
    return [*binds, "--remount-ro", "/mnt"]


def _hand_over(workspace: int, uid: int, keep: set[str]) -> None:
    """Give the workspace (open as ``workspace``) and everything in it but the top folders ``keep`` to
    ``uid``: walked by descriptor (``os.fwalk`` never follows a link, nor a folder swapped for one), each
    entry changed relative to its folder without following links; what is the sandbox user's already is
    left alone."""
    if os.fstat(workspace).st_uid != uid:
        os.fchown(workspace, uid, uid)
    for folder, dirs, files, folder_fd in os.fwalk(".", dir_fd=workspace, follow_symlinks=False):
        if folder == ".":
            dirs[:] = [name for name in dirs if name not in keep]
        for name in (*dirs, *files):
            try:
                if os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_uid != uid:
                    os.chown(name, uid, uid, dir_fd=folder_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # gone meanwhile


def _host_system_binds() -> list[str]:
    """The CUDA side's root: the host's system folders read-only, nothing else of it."""
    binds = ["--ro-bind", "/usr", "/usr", "--ro-bind-try", "/opt", "/opt",
             "--perms", "0755", "--dir", "/etc", "--dir", str(MOUNT), "--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/dev/shm"]
    for top in ("bin", "sbin", "lib", "lib64", "lib32"):
        if os.path.islink(f"/{top}"):
            binds += ["--symlink", os.readlink(f"/{top}"), f"/{top}"]
        elif os.path.isdir(f"/{top}"):
            binds += ["--ro-bind", f"/{top}", f"/{top}"]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives"):
        binds += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return binds


def _rlimits(limits: SandboxLimits, *, pids_limited: bool) -> list[str]:
    cpu = limits.cpu_seconds or int(limits.timeout_s * (os.cpu_count() or 1)) + 60
    rlimits = [f"CPU={cpu}", f"FSIZE={limits.file_size_mb << 20}", "CORE=0"]
    if not pids_limited:  # counted per user id: only a fallback when the job has no pids cgroup
        rlimits.append(f"NPROC={limits.processes}")
    address_space = limits.memory_mb if limits.address_space_mb is None else limits.address_space_mb
    if address_space:
        rlimits.append(f"AS={address_space << 20}")
    return rlimits


def _gpu_binds() -> list[str]:
    binds: list[str] = []
    for device in (*_GPU_DEVICES, *sorted(glob.glob("/dev/nvidia*"))):
        if os.path.exists(device):
            binds += ["--dev-bind", device, device]
    if binds:  # the ROCm runtime reads the GPU topology from sysfs
        binds += ["--ro-bind", "/sys", "/sys"]
        for folder in _SYS_MASKED:
            if os.path.isdir(folder):
                binds += ["--tmpfs", folder]
    return binds


def require_bubblewrap(root: ToolchainRoot | None) -> None:
    problem = _bubblewrap_problem(str(root.path) if root else "")
    if problem:
        raise SandboxUnavailable(problem)


@functools.cache
def _bubblewrap_problem(root: str) -> str:
    """Empty when bubblewrap can build a sandbox over ``root`` here, else what is missing."""
    if not shutil.which("bwrap"):
        return "the sandbox needs bubblewrap, which is not installed (apt package bubblewrap); nothing was run"
    binds = ["--ro-bind", root, "/", "--proc", "/proc", "--dev", "/dev"] if root else _host_system_binds()
    probe = ["bwrap", *binds, "--unshare-pid", "--unshare-net"]
    if os.geteuid() != 0:
        probe.append("--unshare-user")
    try:
        done = subprocess.run([*probe, "--", "/bin/true"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start a sandbox: {exc}; nothing was run"
    if done.returncode != 0:
        return (f"bubblewrap could not start a sandbox here ({done.stderr.strip() or done.returncode}); "
                "it needs user namespaces (sysctl kernel.unprivileged_userns_clone=1) or root; nothing was run")
    return ""


def sandbox_problem(root: ToolchainRoot | None) -> str:
    return _bubblewrap_problem(str(root.path) if root else "")


def isolation_notes() -> list[str]:
    """What this worker's sandboxes cannot have (the same for every sandbox here), for logs and pages."""
    notes: list[str] = []
    support = cgroup_support()
    if support.version == "none":
        notes.append(support.describe())
    elif support.problem:
        notes.append(f"cgroup per job: {support.problem}; that limit is per process only")
    if os.geteuid() != 0:
        notes.append("non-root worker: sandboxes share the worker's user id, so the process limit is shared "
                     "unless a delegated cgroup limits each job")
    return notes


def isolation_report(toolchain: ToolchainRoot | None) -> dict[str, object]:
    """The isolation mechanisms in effect on this worker (the runners page shows them)."""
    support: CgroupSupport = cgroup_support()
    root = os.geteuid() == 0
    ids = uid_range()
    hiding = overlay_problem(toolchain.path.resolve()) if toolchain else "no toolchain root to show"
    return {
        "cgroup": support.describe(), "cgroup_ok": support.version != "none" and not support.problem,
        "identity": (f"a user id of its own per workspace ({ids.start}–{ids.stop - 1})" if root
                     else "the worker's own user id, in a user namespace"),
        "identity_ok": root,
        "host_paths": "hidden (bubblewrap --args; overlay views; work volumes)" if not hiding else f"visible in mountinfo ({hiding})",
        "host_paths_ok": not hiding,
        "work_area": "loop-mounted ext4 volumes" if not loop_problem() else f"watched folders ({loop_problem()})",
        "work_area_ok": not loop_problem(),
    }


def _limit_violations(limits: SandboxLimits, events: LimitEvents | None) -> list[str]:
    violations: list[str] = []
    if events is not None and events.oom_kills:
        violations.append(f"the job hit its memory limit of {limits.memory_mb} MB: the kernel stopped "
                          f"{events.oom_kills} of its processes")
    if events is not None and events.refused_forks:
        violations.append(f"the command hit its limit of {limits.processes} processes "
                          f"({events.refused_forks} refused)")
    return violations


def find_violations(
    process: ProcessResult, limits: SandboxLimits, events: LimitEvents | None = None, full: WorkArea | None = None,
) -> list[str]:
    """Why the job failed, decided by signals: the runner's limits, the cgroup's counters, signals, a full
    work area. Words in the output only explain a job that failed anyway (a passing build may print
    "Could not resolve host" or "out of memory" and still pass)."""
    violations: list[str] = []
    if process.timed_out:
        violations.append(f"the command ran past its time limit of {limits.timeout_s:g} s and was killed")
    if process.output_exceeded:
        violations.append(f"the command printed more than {limits.output_bytes} bytes and was stopped")
    violations += _limit_violations(limits, events)
    if full is not None and (not process.ok or full.kind == "folder"):
        violations.append(f"workspace limit reached ({full.size_mb} MB)")
    if process.returncode in (-_SIGXCPU, 128 + _SIGXCPU):
        violations.append("the command used up its CPU time limit and was killed")
    if process.returncode in (-_SIGXFSZ, 128 + _SIGXFSZ):
        violations.append(f"the command wrote a file past the size limit of {limits.file_size_mb} MB and was stopped")
    if not process.ok:
        violations += _explanations(process.output, limits, pids_counted=events is not None and bool(events.refused_forks))
    return list(dict.fromkeys(violations))[:20]


def _explanations(output: str, limits: SandboxLimits, *, pids_counted: bool) -> list[str]:
    notes: list[str] = []
    for line in output.splitlines():
        if any(marker in line for marker in _WRITE_DENIED):
            notes.append(f"the command tried to write outside its workspace, which the sandbox denies: {line.strip()}")
        elif any(marker in line for marker in _NETWORK_DENIED):
            notes.append(f"the command tried to use the network, which the sandbox denies: {line.strip()}")
        elif any(marker in line for marker in _OUT_OF_MEMORY):
            notes.append(f"the command hit its memory limit of {limits.memory_mb} MB: {line.strip()}")
        elif not pids_counted and any(marker in line for marker in _TOO_MANY_PROCESSES):
            notes.append(f"the command hit its limit of {limits.processes} processes: {line.strip()}")
    return notes
