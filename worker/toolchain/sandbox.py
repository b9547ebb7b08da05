"""Run an untrusted project build with no network, a read-only system and resource limits.

Mechanism, best first:
- ``bwrap`` (bubblewrap): the whole root bind-mounted read-only, only the run's
  workspace writable (its ``source`` copy read-only too), a private ``/tmp``
  (a tmpfs thrown away afterwards, so scratch files there are allowed),
  new network and PID namespaces, killed with its parent.
- ``unshare -n``: network denied only; writes outside the workspace are NOT
  prevented (reported through ``SandboxStatus.isolates_writes``).
Limits are applied by ``prlimit`` inside the sandbox (address space, CPU time,
file size); wall time by the runner, which kills the process group. The
environment is rebuilt from an allow-list, so no CUDA_*/NVCC_* variable, no
CUDA entry of PATH/LD_LIBRARY_PATH and no secret of the worker reaches the build.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from worker.toolchain.detect import HIP_PLATFORM
from worker.toolchain.runner import ProcessResult, run_process

Mechanism = Literal["bwrap", "unshare", "none"]

_KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "ROCM_PATH", "HIP_PATH", "HIP_CLANG_PATH",
                   "HIP_DEVICE_LIB_PATH", "HSA_PATH", "SOURCE_DATE_EPOCH")
_WRITE_DENIED = ("Read-only file system",)
_NETWORK_DENIED = ("Network is unreachable", "Temporary failure in name resolution", "Could not resolve host",
                   "Name or service not known", "No address associated with hostname")
_OUT_OF_MEMORY = ("Cannot allocate memory", "MemoryError", "std::bad_alloc", "out of memory", "LLVM ERROR: out of memory")


@dataclass(frozen=True)
class SandboxLimits:
    timeout_s: float
    memory_mb: int
    cpu_seconds: int = 0  # 0: derived from the time limit and the core count
    file_size_mb: int = 8192


@dataclass(frozen=True)
class SandboxStatus:
    mechanism: Mechanism
    isolates_network: bool
    isolates_writes: bool


@dataclass
class SandboxResult:
    process: ProcessResult
    violations: list[str]  # clear messages: network use, writes outside the workspace, limits hit
    mechanism: Mechanism

    @property
    def ok(self) -> bool:
        return self.process.ok and not self.violations


@functools.cache
def sandbox_status() -> SandboxStatus:
    if shutil.which("bwrap") and _works(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "true"]):
        return SandboxStatus("bwrap", True, True)
    if shutil.which("unshare") and _works(["unshare", "--net", "true"]):
        return SandboxStatus("unshare", True, False)
    return SandboxStatus("none", False, False)


def _works(command: list[str]) -> bool:
    try:
        return subprocess.run(command, capture_output=True, timeout=20, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def scrubbed_environment(workspace: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    source = dict(os.environ if base is None else base)
    env = {name: source[name] for name in _KEPT_VARIABLES if name in source}
    env.update({name: value for name, value in source.items() if name.startswith("HIPCC_")})
    env["PATH"] = _without_cuda(env.get("PATH", "/usr/local/bin:/usr/bin:/bin"))
    if library_path := _without_cuda(source.get("LD_LIBRARY_PATH", "")):
        env["LD_LIBRARY_PATH"] = library_path
    env.update(HIP_PLATFORM=HIP_PLATFORM, HOME=str(workspace / ".home"), TMPDIR="/tmp")
    return env


def _without_cuda(search_path: str) -> str:
    return ":".join(entry for entry in search_path.split(":") if entry and "cuda" not in entry.lower())


def sandbox_command(command: list[str], workspace: Path, cwd: Path, limits: SandboxLimits) -> list[str]:
    """``command`` wrapped in the sandbox and resource limits."""
    cpu = limits.cpu_seconds or int(limits.timeout_s * (os.cpu_count() or 1)) + 60
    limited = ["prlimit", f"--as={limits.memory_mb * 1024 * 1024}", f"--cpu={cpu}",
               f"--fsize={limits.file_size_mb * 1024 * 1024}", "--", *command]
    mechanism = sandbox_status().mechanism
    if mechanism == "unshare":
        return ["unshare", "--net", "--", *limited]
    if mechanism == "none":
        raise RuntimeError("no sandbox available: install bubblewrap (apt package bubblewrap)")
    binds = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
             "--bind", str(workspace), str(workspace)]
    if (workspace / "source").is_dir():
        binds += ["--ro-bind", str(workspace / "source"), str(workspace / "source")]
    return ["bwrap", *binds, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent",
            "--chdir", str(cwd), *limited]


def run_sandboxed(
    command: list[str], workspace: Path, cwd: Path, limits: SandboxLimits,
    on_line: Callable[[str], None] | None = None,
) -> SandboxResult:
    """Run ``command`` in the sandbox; violations are named in plain words."""
    status = sandbox_status()
    if status.mechanism == "none":
        message = "no sandbox available (bubblewrap and unshare both failed); project build refused"
        return SandboxResult(ProcessResult(126, message + "\n", 0.0, False, False), [message], "none")
    workspace = workspace.resolve()
    (workspace / ".home").mkdir(parents=True, exist_ok=True)
    wrapped = sandbox_command(command, workspace, cwd.resolve(), limits)
    process = run_process(wrapped, cwd, scrubbed_environment(workspace), limits.timeout_s, on_line)
    return SandboxResult(process, find_violations(process, limits), status.mechanism)


def find_violations(process: ProcessResult, limits: SandboxLimits) -> list[str]:
    violations: list[str] = []
    if process.timed_out:
        violations.append(f"the build ran past its time limit of {limits.timeout_s:g} s and was killed")
    for line in process.output.splitlines():
        if any(marker in line for marker in _WRITE_DENIED):
            violations.append(f"the build tried to write outside its workspace, which the sandbox denies: {line.strip()}")
        elif any(marker in line for marker in _NETWORK_DENIED):
            violations.append(f"the build tried to use the network, which the sandbox denies: {line.strip()}")
        elif any(marker in line for marker in _OUT_OF_MEMORY):
            violations.append(f"the build hit its memory limit of {limits.memory_mb} MB: {line.strip()}")
    if process.returncode in (-24, 128 + 24, 152):  # SIGXCPU
        violations.append("the build used up its CPU time limit and was killed")
    return list(dict.fromkeys(violations))[:20]
