"""Every command over user content runs here: bubblewrap over a toolchain root, never over the host.

What the command sees: the toolchain root read-only as ``/``; its workspace read-write at
``/workspace`` (for a run, the run's ``work/`` folder: ``worker/toolchain/work.py``); the folders given
as ``binds`` read-only at their sandbox paths (a run's ``source/`` at ``/workspace/source`` and its
translated tree at ``/workspace/.translated``); a fresh ``/tmp``; ``/proc``; a minimal ``/dev`` (plus
``/dev/kfd`` and ``/dev/dri`` for smoke runs on a ROCm runner); where a stage asks for them, folders of the
product's own code read-only under ``/mnt/migrator`` (``tools``: PyTorch's pure-Python hipify, say). Nothing else of the host: no host
``/etc``, no database, broker or web-server sockets, no var dir, no run's records, no other run.

Who it runs as: an unprivileged user. When the worker is root, bubblewrap sets up the namespaces and
``setpriv`` (from the root) drops to ``MIGRATOR_SANDBOX_UID`` before the command starts, so the
process limit applies (the kernel exempts root from it); the workspace is handed to that user first,
through directory descriptors that never follow a link (``_hand_over``).

Limits: wall time, output size and the stop flag by the runner (which kills the process group; the
PID namespace and ``--die-with-parent`` take every descendant with it, also when the worker itself is
killed); address space, CPU time, file size and number of processes by ``prlimit``. No network, a
scrubbed environment. When bubblewrap cannot run, nothing runs: ``SandboxUnavailable`` names what is missing.
"""
from __future__ import annotations

import errno
import functools
import glob
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from worker.toolchain.detect import hip_environment
from worker.toolchain.roots import ToolchainRoot
from worker.toolchain.runner import ProcessResult, run_process

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


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot run here; the message says what is missing. Nothing runs unsandboxed."""


@dataclass(frozen=True)
class SandboxLimits:
    timeout_s: float
    memory_mb: int = 8192  # address space; 0: none (the HIP runtime maps more than it uses)
    cpu_seconds: int = 0  # 0: derived from the time limit and the core count
    file_size_mb: int = 8192
    processes: int = 1024
    output_bytes: int = 20_000_000


@dataclass
class SandboxResult:
    process: ProcessResult
    violations: list[str]  # clear messages: network use, writes outside the workspace, limits hit
    mechanism: Mechanism = "bwrap"
    command: list[str] = field(default_factory=list)  # what ran inside, as given

    @property
    def ok(self) -> bool:
        return self.process.ok and not self.violations


def sandbox_uid() -> int:
    return int(os.environ.get("MIGRATOR_SANDBOX_UID") or 64400)


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
    toolkit lives) read-only and nothing else of the host, the same limits and the same user.
    """

    def __init__(
        self, root: ToolchainRoot | None, workspace: Path, *, gpu_devices: bool = False,
        read_only: Sequence[str] = ("source",), environment: Mapping[str, str] | None = None,
        tools: Mapping[str, Path] | None = None,
        binds: Mapping[str, Path] | None = None,
    ) -> None:
        """``read_only``: folders of the workspace itself bound read-only over themselves (real folders only,
        never a link). ``binds``: sandbox path -> host folder, bound read-only; a path under ``/workspace``
        names one entry of it (``/workspace/source``), anything else lies on the sandbox's own file system
        (``/tmp/...``)."""
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
        self.environment = dict(environment or {})
        self.tools = {_tool_name(name): Path(path).resolve() for name, path in (tools or {}).items()}
        self._prepared = False

    def with_binds(self, binds: Mapping[str, Path]) -> Sandbox:
        """The same sandbox with more read-only folders (inputs the root side wrote where no sandbox writes)."""
        extended = Sandbox(self.root, self.workspace, gpu_devices=self.gpu_devices, read_only=(),
                           environment=self.environment, binds={**self._binds_given, **binds})
        extended.read_only = list(self.read_only)
        extended.given = self.given
        extended._prepared = self._prepared
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
        wrapped = self.command(list(argv), cwd, limits, env)
        process = run_process(wrapped, self.workspace, {"PATH": PATH, "LANG": "C.UTF-8"}, limits.timeout_s,
                              on_line, limits.output_bytes, should_stop, stdin)
        return SandboxResult(process, find_violations(process, limits), "bwrap", list(argv))

    def command(
        self, argv: list[str], cwd: str, limits: SandboxLimits, env: Mapping[str, str] | None = None
    ) -> list[str]:
        """The full command line: prlimit, bubblewrap and (as root) setpriv around ``argv``.

        Raises ``SandboxUnavailable`` when bubblewrap cannot run here."""
        require_bubblewrap(self.root)
        self._prepare()
        as_root = os.geteuid() == 0
        uid = sandbox_uid()
        bwrap = ["bwrap", *_root_binds(self.root), "--proc", "/proc", "--dev", "/dev",
                 "--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/dev/shm",
                 "--bind", str(self.workspace), str(MOUNT)]
        for path in self.read_only:
            bwrap += ["--ro-bind", str(path), self.inside(path)]
        for inside, host in self.binds.items():
            bwrap += ["--ro-bind", str(host), inside]
        if self.tools:
            bwrap += _tool_binds(self.tools)
        if self.gpu_devices:
            bwrap += _gpu_binds()
        bwrap += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                  "--hostname", "sandbox", "--die-with-parent", "--new-session", "--chdir", cwd, "--clearenv"]
        if not as_root:
            bwrap += ["--unshare-user", "--uid", str(uid), "--gid", str(uid)]
        for name, value in self._environment(env).items():
            bwrap += ["--setenv", name, value]
        drop = (["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
                 "--inh-caps=-all", "--bounding-set=-all", "--"] if as_root else [])
        return [*_prlimit(limits), *bwrap, "--", *drop, *argv]

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
        """Before each command: the mount points of the binds are real folders; once per sandbox (a root
        worker only), the workspace goes to the sandbox user."""
        workspace = os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            names = [PurePosixPath(inside).name for inside in self.binds if PurePosixPath(inside).parent == MOUNT]
            for name in (".home", *names):
                _real_folder_at(workspace, name)
            if not self._prepared and os.geteuid() == 0:
                _hand_over(workspace, sandbox_uid(), {path.name for path in self.read_only})
        finally:
            os.close(workspace)
        self._prepared = True


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


def _root_binds(root: ToolchainRoot | None) -> list[str]:
    if root is not None:
        return ["--ro-bind", str(root.path), "/"]
    binds = ["--ro-bind", "/usr", "/usr", "--ro-bind-try", "/opt", "/opt", "--perms", "0755", "--dir", "/etc",
             "--dir", str(MOUNT)]
    for top in ("bin", "sbin", "lib", "lib64", "lib32"):
        if os.path.islink(f"/{top}"):
            binds += ["--symlink", os.readlink(f"/{top}"), f"/{top}"]
        elif os.path.isdir(f"/{top}"):
            binds += ["--ro-bind", f"/{top}", f"/{top}"]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives"):
        binds += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return binds


def _prlimit(limits: SandboxLimits) -> list[str]:
    cpu = limits.cpu_seconds or int(limits.timeout_s * (os.cpu_count() or 1)) + 60
    command = ["prlimit", f"--cpu={cpu}", f"--fsize={limits.file_size_mb * 1024 * 1024}",
               f"--nproc={limits.processes}", "--core=0"]
    if limits.memory_mb:
        command.append(f"--as={limits.memory_mb * 1024 * 1024}")
    return [*command, "--"]


def _tool_name(name: str) -> str:
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or ".." in parts:
        raise ValueError(f"{name!r} is not a relative name under {TOOLS}")
    return "/".join(parts)


def _tool_binds(tools: Mapping[str, Path]) -> list[str]:
    """The product's own code under TOOLS, read-only. A read-only root cannot take new mount points, so a
    fresh tmpfs goes over ``/mnt`` (Debian's and Ubuntu's base layout always has it), the folders are bound
    in it, and the tmpfs is then made read-only too: nothing can be added beside them."""
    binds = ["--perms", "0755", "--tmpfs", "/mnt"]
    folders = sorted({str(parent) for name in tools for parent in (TOOLS / name).parents if parent != PurePosixPath("/")
                      and parent != PurePosixPath("/mnt")})
    for folder in folders:  # bubblewrap would make missing parents private to root (0700)
        binds += ["--perms", "0755", "--dir", folder]
    for name, path in sorted(tools.items()):
        binds += ["--ro-bind", str(path), str(TOOLS / name)]
    return [*binds, "--remount-ro", "/mnt"]


def _gpu_binds() -> list[str]:
    binds: list[str] = []
    for device in (*_GPU_DEVICES, *sorted(glob.glob("/dev/nvidia*"))):
        if os.path.exists(device):
            binds += ["--dev-bind", device, device]
    if binds:  # the ROCm runtime reads the GPU topology from sysfs
        binds += ["--ro-bind", "/sys", "/sys"]
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
    if not shutil.which("prlimit"):
        return "the sandbox needs prlimit (apt package util-linux); nothing was run"
    binds = ["--ro-bind", root, "/"] if root else _root_binds(None)
    probe = ["bwrap", *binds, "--proc", "/proc", "--dev", "/dev", "--unshare-pid", "--unshare-net"]
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


def find_violations(process: ProcessResult, limits: SandboxLimits) -> list[str]:
    violations: list[str] = []
    if process.timed_out:
        violations.append(f"the command ran past its time limit of {limits.timeout_s:g} s and was killed")
    if process.output_exceeded:
        violations.append(f"the command printed more than {limits.output_bytes} bytes and was stopped")
    for line in process.output.splitlines():
        if any(marker in line for marker in _WRITE_DENIED):
            violations.append(f"the command tried to write outside its workspace, which the sandbox denies: {line.strip()}")
        elif any(marker in line for marker in _NETWORK_DENIED):
            violations.append(f"the command tried to use the network, which the sandbox denies: {line.strip()}")
        elif any(marker in line for marker in _OUT_OF_MEMORY):
            violations.append(f"the command hit its memory limit of {limits.memory_mb} MB: {line.strip()}")
        elif any(marker in line for marker in _TOO_MANY_PROCESSES):
            violations.append(f"the command hit its limit of {limits.processes} processes: {line.strip()}")
    if process.returncode in (-24, 128 + 24, 152):  # SIGXCPU
        violations.append("the command used up its CPU time limit and was killed")
    return list(dict.fromkeys(violations))[:20]
